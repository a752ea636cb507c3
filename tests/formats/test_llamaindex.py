"""LlamaIndex agents after the run and live (spec A-1, A-2, A-3, L-3, L-4; issue 22).

The runs are the real ``llama-index-core`` with ``MockFunctionCallingLLM`` (``llamaindex_runs``):
a ``FunctionAgent`` that thinks, calls ``add`` (succeeds) and ``explode`` (raises) and answers;
an ``AgentWorkflow`` whose ``lead`` hands off to ``math``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.formats.frameworks import adapter_of, llamaindex
from turnfold.model import AssistantText, SystemNotice, Thinking, ToolCall, Transcript, UserMessage

pytest.importorskip("llama_index.core")

from pydantic import BaseModel

from tests.formats import llamaindex_runs
from tests.formats.counters_llamaindex import llamaindex as count_calls
from tests.formats.flat_reads import assert_read_alike, read_both
from tests.formats.loops import run_async
from tests.formats.structured_answers import answer_of, structured_answers

SOLO = llamaindex_runs.FIXTURES / "llama-index-core_v0.14.25_memory_solo.json"
HANDOFF = llamaindex_runs.FIXTURES / "llama-index-core_v0.14.25_memory_handoff.json"
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "explode", {"x": "y"}, "error", "boom: y"),
]
ANSWER = "1+2=3; explode failed."


@pytest.fixture(scope="module")
def solo() -> tuple[Any, Any, list[Any]]:
    return llamaindex_runs.run("solo")


@pytest.fixture(scope="module")
def handoff() -> tuple[Any, Any, list[Any]]:
    return llamaindex_runs.run("handoff")


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def kinds(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


# --- after the run -------------------------------------------------------------------------


def test_A1_load_of_the_handler_shows_prompt_thinking_calls_statuses_and_answer(
    solo: tuple[Any, Any, list[Any]],
) -> None:
    handler, _, _ = solo
    transcript = turnfold.load(handler)
    assert transcript.metadata == {
        "source_format": "llamaindex", "agent": "Agent", "system": "Be terse.",
    }  # fmt: skip
    assert kinds(transcript) == ["UserMessage", "Thinking", "ToolCall", "ToolCall", "AssistantText"]
    first = transcript.entries[0]
    assert isinstance(first, UserMessage)
    assert first.text == llamaindex_runs.PROMPT
    thinking = transcript.entries[1]
    assert isinstance(thinking, Thinking)
    assert thinking.text == "need add"
    # The statuses are the run's ToolCallResult.is_error: the messages hold no flag.
    assert calls_of(transcript) == CALLS
    assert [c.batch_id for c in transcript.tool_calls()] == ["msg-2", "msg-4"]
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == ANSWER
    assert transcript.warnings == []


def test_L3_the_memory_alone_has_no_error_flag_so_its_calls_are_unknown(
    solo: tuple[Any, Any, list[Any]],
) -> None:
    handler, _, _ = solo
    messages = llamaindex_runs.memory_of(handler)
    assert type(messages[0]).__name__ == "ChatMessage"
    transcript = turnfold.load(messages)
    assert [c[3] for c in calls_of(transcript)] == ["unknown", "unknown"]
    assert [c[4] for c in calls_of(transcript)] == ["3", "boom: y"]
    assert transcript.entries[-1].text == ANSWER
    # The memory object itself, and the context, read the same without running the loop.
    memory = run_async(handler.ctx.store.get("memory"))
    assert calls_of(turnfold.load(memory)) == calls_of(transcript)
    assert calls_of(turnfold.load(handler.ctx)) == calls_of(transcript)


def test_A1_an_agent_output_alone_holds_the_calls_with_is_error_and_says_it_is_partial(
    solo: tuple[Any, Any, list[Any]],
) -> None:
    _, output, _ = solo
    transcript = turnfold.load(output)
    notice = transcript.entries[0]
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "partial"
    assert calls_of(transcript) == CALLS
    assert transcript.entries[-1].text == ANSWER
    # Its own model_dump() types tool_calls as ToolSelection: is_error is gone, and says so.
    saved = json.loads(output.model_dump_json())
    assert "tool_output" not in saved["tool_calls"][0]
    assert [c[3] for c in calls_of(turnfold.load(saved))] == ["unknown", "unknown"]


def test_A1_the_saved_json_loads_by_detection_and_the_counter_agrees(tmp_path: Path) -> None:
    for path in (SOLO, HANDOFF):
        transcript = turnfold.load(path)
        assert transcript.metadata["source_format"] == "llamaindex"
        assert len(transcript.tool_calls(nested=True)) == count_calls(path)
        assert transcript.warnings == []
    records = json.loads(SOLO.read_text(encoding="utf-8"))
    lines = tmp_path / "messages.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert calls_of(turnfold.load(lines)) == calls_of(turnfold.load(SOLO))


def test_A1_a_handoff_nests_the_next_agent_s_steps_and_the_answer_goes_on_top(
    handoff: tuple[Any, Any, list[Any]],
) -> None:
    handler, _, _ = handoff
    transcript = turnfold.load(handler)
    assert transcript.metadata["agent"] == "lead"
    assert kinds(transcript) == ["UserMessage", "AssistantText", "ToolCall", "AssistantText"]
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("handoff", "success")
    assert call.subagent is not None
    assert (call.subagent.name, call.subagent.task, call.subagent.tool_count) == (
        "math", "needs math", 1,
    )  # fmt: skip
    assert call.subagent.transcript is not None
    assert calls_of(call.subagent.transcript) == [("c1", "add", {"a": 2, "b": 3}, "success", "5")]
    assert transcript.entries[-1].text == "2+3=5"


def test_L3_the_memory_alone_shows_a_handoff_taken_by_the_handoff_tool_s_own_words() -> None:
    """The saved memory has no error flag, but the handoff tool's reply when the agent took
    over is the framework's own text: the handoff succeeded, as its nesting says; the call the
    agent made after it has no such text and stays unknown."""
    transcript = turnfold.load(HANDOFF)
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("handoff", "success")
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert [(c.name, c.status) for c in call.subagent.transcript.tool_calls()] == [
        ("add", "unknown")
    ]
    custom = [
        {"role": "user", "blocks": [{"block_type": "text", "text": "go"}]},
        {"role": "assistant", "blocks": [{"block_type": "tool_call", "tool_call_id": "h",
         "tool_name": "handoff", "tool_kwargs": {"to_agent": "math", "reason": "r"}}]},
        {"role": "tool", "additional_kwargs": {"tool_call_id": "h"},
         "blocks": [{"block_type": "text", "text": "Math it is."}]},
    ]  # fmt: skip
    assert turnfold.load(custom).tool_calls()[0].status == "unknown"  # a prompt of its own


def test_A1_the_older_tool_calls_form_and_a_refused_handoff() -> None:
    messages = [
        {"role": "user", "content": "hi", "additional_kwargs": {}},
        {"role": "assistant", "content": "", "additional_kwargs": {"tool_calls": [
            {"id": "t1", "type": "function",
             "function": {"name": "lookup", "arguments": '{"query": "x"}'}}],
            "prompt_tokens": 12, "completion_tokens": 3}},
        {"role": "tool", "content": "Tool lookup not found. Please select a tool that is "
         "available.", "additional_kwargs": {"tool_call_id": "t1"}},
        {"role": "assistant", "additional_kwargs": {}, "blocks": [
            {"block_type": "tool_call", "tool_call_id": "h", "tool_name": "handoff",
             "tool_kwargs": {"to_agent": "nobody", "reason": "r"}}]},
        {"role": "tool", "additional_kwargs": {"tool_call_id": "h"}, "blocks": [
            {"block_type": "text", "text": "Agent nobody not found. Please select a valid "
             "agent to hand off to. Valid agents: ['a']"}]},
    ]  # fmt: skip
    transcript = turnfold.load(messages)
    assert transcript.metadata["source_format"] == "llamaindex"
    lookup, refused = transcript.tool_calls()
    assert (lookup.args, lookup.status) == ({"query": "x"}, "error")
    assert lookup.usage is not None
    assert lookup.usage.output_tokens == 3
    assert refused.status == "error"
    assert refused.subagent is not None
    assert refused.subagent.transcript is None


# --- L-4 ------------------------------------------------------------------------------------------


def test_L4_unknown_blocks_and_orphan_results_warn_and_the_rest_is_shown() -> None:
    messages = [
        {"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "q"}]},
        {"role": "assistant", "additional_kwargs": {}, "blocks": [
            {"block_type": "text", "text": "a"}, {"block_type": "hologram"}]},
        {"role": "tool", "additional_kwargs": {"tool_call_id": "zz"}, "blocks": []},
    ]  # fmt: skip
    transcript = turnfold.load(messages, format="llamaindex")
    assert [getattr(e, "text", None) for e in transcript.entries] == ["q", "a"]
    reasons = [w.reason for w in transcript.warnings]
    assert "content block 'hologram' not shown" in reasons
    assert "tool message for an unknown tool_call_id 'zz'" in reasons
    with pytest.raises(TranscriptFormatError):
        turnfold.load([{"nothing": 1}], format="llamaindex")


# --- live ----------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["solo", "handoff"])
def test_A2_following_the_events_ends_as_load_of_the_handler(which: str) -> None:
    transcript = Transcript()
    follower = llamaindex.Follower(transcript)
    seen: list[tuple[str, str]] = []
    transcript.observe(
        lambda change: (
            seen.append((change.entry.call_id, change.entry.status))
            if isinstance(change.entry, ToolCall)
            else None
        )
    )
    handler, _, events = llamaindex_runs.run(which, follower.feed)
    follower.close()
    assert transcript == turnfold.load(handler)
    assert transcript.warnings == []
    if which == "solo":
        assert calls_of(transcript) == CALLS
        assert ("call_2", "executing") in seen
        assert ("call_2", "error") in seen
    assert {type(e).__name__ for e in events} >= {
        "AgentInput", "AgentStream", "AgentOutput", "ToolCall", "ToolCallResult", "StopEvent",
    }  # fmt: skip
    assert adapter_of(events[0]) is llamaindex


def test_A2_async_follow_under_a_running_loop_yields_every_event_unchanged() -> None:
    async def main() -> tuple[Any, Any, list[Any]]:
        handler = llamaindex_runs.solo_agent().run(user_msg=llamaindex_runs.PROMPT)
        followed = turnfold.follow(handler.stream_events(), display=False)
        passed = [event async for event in followed]
        await handler
        return handler, followed, passed

    handler, followed, passed = run_async(main())
    assert type(passed[-1]).__name__ == "StopEvent"
    assert followed.transcript.metadata["source_format"] == "llamaindex"
    assert followed.transcript == turnfold.load(handler)
    assert calls_of(followed.transcript) == CALLS


def test_A2_streamed_text_grows_in_place_and_an_unknown_event_is_warned_once() -> None:
    from llama_index.core.agent.workflow import AgentStream
    from workflows.events import Event

    transcript = Transcript()
    follower = llamaindex.Follower(transcript)
    for piece in ("1+2", "=3"):
        follower.feed(AgentStream(delta=piece, response="", current_agent_name="Agent"))
    assert [e.text for e in transcript.entries] == ["1+2=3"]

    class Progress(Event):
        pass

    follower.feed(Progress())
    follower.feed(Progress())
    assert [w.reason for w in transcript.warnings] == ["event Progress not shown"]


# --- A-3 ----------------------------------------------------------------------------------------


def test_A3_the_module_imports_without_importing_llama_index() -> None:
    code = (
        "import sys, json, turnfold, turnfold.formats.frameworks.llamaindex as m\n"
        f"t = turnfold.load({str(SOLO)!r})\n"
        "print(t.metadata['source_format'], 'llama_index' in sys.modules, "
        "'workflows' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["llamaindex", "False", "False"]


def test_L2_plain_and_langchain_messages_are_not_claimed() -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert turnfold.load(plain).metadata["source_format"] != "llamaindex"
    langchain = [{"type": "human", "content": "hi", "additional_kwargs": {}}]
    assert turnfold.load(langchain).metadata["source_format"] != "llamaindex"


# --- issue 22: a finished run read flat -----------------------------------------------------------


def _message(role: str, *blocks: Any, **kwargs: Any) -> Any:
    from llama_index.core.llms import ChatMessage

    return ChatMessage(role=role, blocks=list(blocks), additional_kwargs=kwargs)


def _text(text: str) -> Any:
    from llama_index.core.base.llms.types import TextBlock

    return TextBlock(text=text)


def _call(call_id: str, name: str = "add", **args: Any) -> Any:
    from llama_index.core.base.llms.types import ToolCallBlock

    return ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=args)


def _run_values(which: str) -> Any:
    """A finished run as a user hands it to ``load``."""
    if which == "counting":
        handler, _, _ = llamaindex_runs.run_agent(llamaindex_runs.counting_agent(6), "count")
        return handler
    handler, _, _ = llamaindex_runs.run("solo")
    if which == "solo-messages":
        return llamaindex_runs.memory_of(handler)
    if which == "solo-memory":
        return run_async(handler.ctx.store.get("memory"))
    if which == "solo-context":
        return handler.ctx
    return handler


@pytest.mark.parametrize(
    "which", ["solo-handler", "solo-messages", "solo-memory", "solo-context", "counting"]
)
def test_I22_a_run_of_one_agent_reads_flat_as_the_builder_reads_it(
    monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    value = _run_values(which)
    read, built, taken = read_both(
        monkeypatch, llamaindex, value, tried="_flat_run", declined=False
    )
    assert taken
    assert_read_alike(read, built, which)
    if which == "counting":
        assert read.metadata["system"] == "Count."
        assert [c.status for c in read.tool_calls()] == ["success"] * 6
        assert [c.result.text for c in read.tool_calls() if c.result] == [
            str(n + 1) for n in range(6)
        ]
        assert [c.batch_id for c in read.tool_calls()] == [f"msg-{2 * n + 2}" for n in range(6)]
        # Each response's usage on its thinking (no text), the answer's on the answer.
        thinking = [e for e in read.entries if isinstance(e, Thinking)]
        assert [(t.text, t.usage.input_tokens if t.usage else None) for t in thinking] == [
            (f"step {n}", 10 + n) for n in range(6)
        ]
        answer = read.entries[-1]
        assert isinstance(answer, AssistantText)
        assert (answer.text, answer.usage and answer.usage.input_tokens) == ("6 added", 16)
        assert read.accounting is not None
        assert read.accounting.counts == {
            "user": {"mapped": 1}, "assistant": {"mapped": 7}, "tool": {"mapped": 6},
            "llamaindex_run": {"mapped": 1},
        }  # fmt: skip
    elif which != "solo-messages":
        assert calls_of(read) == (
            CALLS if which == "solo-handler" else [(*c[:3], "unknown", *c[4:]) for c in CALLS]
        )


def test_I22_runs_the_flat_read_leaves_to_the_builder_read_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A handoff, and messages whose result comes first, whose ids repeat, that hold an image
    or the older tool_calls form, or a saved dump among the objects: the builder reads the
    whole run (with its warnings), the same whether the flat read was tried or not."""
    from llama_index.core.base.llms.types import ImageBlock

    handoff, _, _ = llamaindex_runs.run("handoff")
    user = _message("user", _text("q"))
    answer = _message("assistant", _text("a"))
    function = {"name": "add", "arguments": '{"a": 1}'}
    older = _message("assistant", tool_calls=[{"id": "o1", "function": function}])
    image = ImageBlock(image=b"iVBORw0KGgo=", image_mimetype="image/png")
    cases: dict[str, tuple[Any, list[str]]] = {
        "handoff": (handoff, []),
        "result first": (
            [user, _message("tool", _text("3"), tool_call_id="c1"),
             _message("assistant", _call("c1", a=1, b=2)), answer],
            ["tool message for an unknown tool_call_id 'c1'"],
        ),
        "repeated id": (
            [user, _message("assistant", _call("c1", a=1, b=2)),
             _message("tool", _text("3"), tool_call_id="c1"),
             _message("assistant", _call("c1", a=2, b=2)), answer],
            ["duplicate tool call id 'c1' skipped"],
        ),
        "no id": ([user, _message("assistant", _call("")), answer], ["tool call without an id"]),
        "image": ([_message("user", _text("see"), image), answer], []),
        "older calls": ([user, older, _message("tool", _text("1"), tool_call_id="o1")], []),
        "a dump among them": ([user, _message("assistant", _text("a")).model_dump()], []),
    }  # fmt: skip
    for name, (value, warned) in cases.items():
        read, built, taken = read_both(
            monkeypatch, llamaindex, value, tried="_flat_run", declined=False
        )
        assert not taken, name
        assert_read_alike(read, built, name)
        assert [w.reason for w in read.warnings] == warned, name
    image_read = turnfold.load(cases["image"][0])
    first = image_read.entries[0]
    assert isinstance(first, UserMessage)
    assert (first.text, [i.media_type for i in first.images]) == ("see", ["image/png"])
    (older_call,) = turnfold.load(cases["older calls"][0]).tool_calls()
    assert (older_call.args, older_call.result and older_call.result.text) == ({"a": 1}, "1")


@pytest.mark.parametrize("which", ["solo-messages", "counting"])
def test_I22_the_messages_and_their_saved_json_read_alike(which: str, tmp_path: Path) -> None:
    value = _run_values(which)
    messages = value if isinstance(value, list) else llamaindex_runs.memory_of(value)
    read = turnfold.load(messages)
    saved = tmp_path / "messages.json"
    saved.write_text(json.dumps([json.loads(m.model_dump_json()) for m in messages]))
    dumped = [m.model_dump(mode="json") for m in messages]
    # model_dump() without mode="json" too: its roles are MessageRole members.
    python_dumped = [m.model_dump() for m in messages]
    for other in (turnfold.load(dumped), turnfold.load(saved), turnfold.load(python_dumped)):
        assert other.entries == read.entries
        assert other.warnings == read.warnings
        assert other.accounting is not None
        assert read.accounting is not None
        assert other.accounting.counts == read.accounting.counts


def test_I22_a_run_s_messages_are_read_in_place_neither_dumped_nor_shared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dumping each message cost as much as LlamaIndex's own serialization of the run: the
    load reads their fields instead, and copies what an entry keeps (the arguments)."""
    from llama_index.core.llms import ChatMessage

    messages = [
        _message("system", _text("Be terse.")),
        _message("user", _text("sum these")),
        _message("assistant", _call("s1", "total", items=[1, 2], opts={"round": True})),
        _message("tool", _text("3"), tool_call_id="s1"),
        _message("assistant", _text("3"), input_tokens=7, output_tokens=1),
    ]

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a ChatMessage dumped")

    monkeypatch.setattr(ChatMessage, "model_dump", refused)
    transcript = turnfold.load(messages)
    assert transcript.metadata["system"] == "Be terse."
    (call,) = transcript.tool_calls()
    assert (call.name, call.args, call.status) == (
        "total", {"items": [1, 2], "opts": {"round": True}}, "unknown",
    )  # fmt: skip
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (7, 1)
    call.args["items"].append(3)
    call.args["opts"]["round"] = False
    assert messages[2].blocks[0].tool_kwargs == {"items": [1, 2], "opts": {"round": True}}


def test_L4_a_tool_result_of_no_json_form_keeps_its_outcome() -> None:
    """A tool that returns an object of its own: the run's ToolCallResult, whose dump fails on
    that raw output, is read for its outcome alone (its result's text is the object's str, as
    the memory keeps it); its outcome was lost, and not said, when it was dumped."""
    from llama_index.core.agent.workflow import FunctionAgent

    class Found:
        def __str__(self) -> str:
            return "found it"

    def fetch(x: str) -> Any:
        """Returns an object."""
        return Found()

    llm = llamaindex_runs.scripted([[_call("f1", "fetch", x="y")], [_text("ok")]])
    handler, _, _ = llamaindex_runs.run_agent(FunctionAgent(tools=[fetch], llm=llm), "go")
    transcript = turnfold.load(handler)
    assert calls_of(transcript) == [("f1", "fetch", {"x": "y"}, "success", "found it")]
    assert transcript.warnings == []


# --- a run that ends without its answer ---------------------------------------------------------


def _looping_agent() -> Any:
    """A ``FunctionAgent`` whose model calls ``explode`` again and again: ``max_iterations=3``
    fails the run (``WorkflowRuntimeError``) right after its third call is written."""
    from llama_index.core.agent.workflow import FunctionAgent

    replies = [[_call(f"c{i}", "explode", x=str(i))] for i in range(5)]
    llm = llamaindex_runs.scripted(replies)
    return FunctionAgent(tools=[llamaindex_runs.explode], llm=llm, system_prompt="Be terse.")


async def _failed_run(on_event: Any = None, *, stream: bool = True) -> Any:
    handler = _looping_agent().run(user_msg="loop", max_iterations=3)
    if stream:  # its stop event, a WorkflowFailedEvent, says how it ended; else its exception
        async for event in handler.stream_events():
            if on_event is not None:
                on_event(event)
    with pytest.raises(Exception, match="Max iterations of 3 reached"):
        await handler
    return handler


@pytest.mark.parametrize("stream", [True, False])
def test_A1_a_failed_run_shows_its_steps_from_the_scratchpad_and_its_error(stream: bool) -> None:
    """The steps of a run that failed never reach the memory (``finalize`` moves them there
    from the agent's scratchpad): they were missing, and so was the failure."""
    handler = run_async(_failed_run(stream=stream))
    transcript = turnfold.load(handler)
    assert kinds(transcript) == ["UserMessage", *["ToolCall"] * 3, "AssistantError"]
    # The memory has no error flag, and no AgentOutput of the run says one (L-3).
    assert calls_of(transcript) == [
        ("c0", "explode", {"x": "0"}, "unknown", "boom: 0"),
        ("c1", "explode", {"x": "1"}, "unknown", "boom: 1"),
        ("c2", "explode", {"x": "2"}, "unknown", None),
    ]
    error = transcript.entries[-1]
    assert error.message.startswith("WorkflowRuntimeError: Max iterations of 3 reached!")
    assert transcript.warnings == []
    # The context alone has the steps too (not how the run ended: the handler knows that).
    assert calls_of(turnfold.load(handler.ctx)) == calls_of(transcript)


def test_A2_a_followed_run_that_fails_ends_with_its_error_not_a_warning() -> None:
    transcript = Transcript()
    follower = llamaindex.Follower(transcript)
    handler = run_async(_failed_run(follower.feed))
    follower.close()
    assert kinds(transcript) == kinds(turnfold.load(handler))
    assert [c[3] for c in calls_of(transcript)] == ["error", "error", "unknown"]
    assert transcript.entries[-1].message == turnfold.load(handler).entries[-1].message
    assert transcript.warnings == []


# --- structured output (P-2) --------------------------------------------------------------------


class City(BaseModel):
    name: str
    population: int
    country: str = "FR"  # left at its default: part of the output all the same


CITY = {"name": "Paris", "population": 3, "country": "FR"}


def _city_agent() -> Any:
    """A ``FunctionAgent`` with ``output_cls=City``: it calls ``add``, answers in text, then
    LlamaIndex asks the model once more for the ``City`` (a call of that name), which the
    memory does not keep: only the ``AgentOutput``'s ``structured_response`` holds it."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import TextBlock, ToolCallBlock

    replies = [
        [ToolCallBlock(tool_call_id="call_1", tool_name="add", tool_kwargs={"a": 1, "b": 2})],
        [TextBlock(text="Paris, population 3.")],
        [ToolCallBlock(tool_call_id="call_2", tool_name="City",
                       tool_kwargs={"name": "Paris", "population": 3})],
    ]  # fmt: skip
    return FunctionAgent(
        tools=[llamaindex_runs.add], llm=llamaindex_runs.scripted(replies), output_cls=City
    )


def test_P2_an_agent_s_structured_response_is_the_turn_s_answer() -> None:
    transcript = Transcript()
    follower = llamaindex.Follower(transcript)
    handler, output, _ = llamaindex_runs.run_async(
        llamaindex_runs._run(_city_agent(), "Which city?", follower.feed)
    )
    follower.close()
    assert output.structured_response == CITY  # the model's dump, its default too
    loaded = turnfold.load(handler)
    assert loaded.warnings == []
    answer, shown = answer_of(loaded)
    assert answer.meta == {"structured_output": True}
    assert json.loads(shown) == CITY
    assert loaded.metadata["structured_response"] == CITY
    texts = [e.text for e in loaded.entries if isinstance(e, AssistantText)]
    assert texts[0] == "Paris, population 3."  # the agent's text stays, in the process
    # Followed from its events (AgentStreamStructuredOutput is no unknown event now).
    assert transcript.warnings == []
    assert transcript == loaded
    # The AgentOutput alone, and saved, shows it alike.
    alone = turnfold.load(output)
    assert answer_of(alone)[0].text == answer.text
    assert turnfold.load(json.dumps(llamaindex.plain(output))).entries == alone.entries


def test_P2_a_run_without_a_structured_response_is_shown_as_before() -> None:
    handler, _, _ = llamaindex_runs.run()
    transcript = turnfold.load(handler)
    assert answer_of(transcript)[0].text == ANSWER
    assert structured_answers(transcript) == []
    assert "structured_response" not in transcript.metadata
