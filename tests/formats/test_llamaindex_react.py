"""LlamaIndex ``ReActAgent``, ``CodeActAgent`` and a workflow of ReAct agents handing off,
after the run and live (spec A-1, A-2, L-3).

The runs are the real ``llama-index-core`` with a scripted text model
(``llamaindex_react_runs``): LlamaIndex's own ``ReActOutputParser`` parses what it writes, its
own ``CodeActAgent`` extracts the ``<execute>`` code; the calls are written as text, so the
memory holds them as text (a ReAct run's whole reasoning as one message when it ends).
"""

from __future__ import annotations

from typing import Any

import pytest

import turnfold
from turnfold.formats.frameworks import llamaindex
from turnfold.model import AssistantText, SystemNotice, Thinking, ToolCall, Transcript, UserMessage

pytest.importorskip("llama_index.core")

from tests.formats import llamaindex_react_runs as runs
from tests.formats import llamaindex_runs
from tests.formats.loops import run_async

ANSWER = "1+2=3; explode failed."


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.name, c.args, c.status, c.result.text if c.result else None, c.batch_id)
        for c in transcript.tool_calls()
    ]


def shown(transcript: Transcript) -> list[tuple[str, Any]]:
    """Each entry's kind and what it shows (a call: its name)."""
    return [
        (type(e).__name__, e.name if isinstance(e, ToolCall) else getattr(e, "text", None))
        for e in transcript.entries
    ]


def follow(which: str, **options: Any) -> tuple[Transcript, Any, Any, list[Any]]:
    """The run followed event by event as it streams; the follower's transcript, the handler,
    the output and the events."""
    transcript = Transcript()
    follower = llamaindex.Follower(transcript)
    handler, output, events = runs.run(which, follower.feed, **options)
    follower.close()
    return transcript, handler, output, events


@pytest.fixture(scope="module")
def react() -> tuple[Transcript, Any, Any, list[Any]]:
    return follow("react")


@pytest.fixture(scope="module")
def codeact() -> tuple[Transcript, Any, Any, list[Any]]:
    return follow("codeact")


# --- ReAct --------------------------------------------------------------------------------------

REACT_SHOWN = [
    ("UserMessage", runs.PROMPT),
    ("Thinking", "I need to add."),
    ("ToolCall", "add"),
    ("Thinking", "Now explode."),
    ("ToolCall", "explode"),
    ("Thinking", "I have both results."),
    ("AssistantText", ANSWER),
]
REACT_CALLS = [
    ("add", {"a": 1, "b": 2}, "success", "3", "msg-2"),
    ("explode", {"x": "y"}, "error", "boom: y", "msg-4"),
]


def test_A1_a_react_run_shows_its_thoughts_calls_results_and_answer(
    react: tuple[Transcript, Any, Any, list[Any]],
) -> None:
    _, handler, output, _ = react
    transcript = turnfold.load(handler)
    # The memory keeps the whole reasoning as one text; its parts are shown as what they are.
    (reasoning,) = [m for m in llamaindex_runs.memory_of(handler) if m.role == "assistant"]
    assert reasoning.content.startswith("Thought: I need to add.\nAction: add\n")
    assert shown(transcript) == REACT_SHOWN
    # The run's ToolCallResults give each call its id and is_error (the text has neither).
    assert calls_of(transcript) == REACT_CALLS
    assert [c.call_id for c in transcript.tool_calls()] == [c.tool_id for c in output.tool_calls]
    assert transcript.metadata == {
        "source_format": "llamaindex", "agent": "Agent", "system": "Be terse.",
    }  # fmt: skip
    assert transcript.warnings == []


def test_L3_a_react_memory_alone_has_no_ids_nor_error_flags(
    react: tuple[Transcript, Any, Any, list[Any]],
) -> None:
    _, handler, _, _ = react
    messages = llamaindex_runs.memory_of(handler)
    for value in (messages, [m.model_dump(mode="json") for m in messages]):
        transcript = turnfold.load(value)
        assert shown(transcript) == REACT_SHOWN
        calls = transcript.tool_calls()
        assert [c.call_id for c in calls] == ["msg-2-add", "msg-4-explode"]
        # The memory writes Action Input as a dict's repr: its values come back.
        assert [(c.args, c.status, c.result.text if c.result else None) for c in calls] == [
            ({"a": 1, "b": 2}, "unknown", "3"), ({"x": "y"}, "unknown", "boom: y"),
        ]  # fmt: skip
        assert transcript.warnings == []


@pytest.mark.parametrize("streaming", [True, False])
def test_A2_following_a_react_run_ends_as_load_of_the_handler(streaming: bool) -> None:
    transcript, handler, _, events = follow("react", streaming=streaming, retry=False)
    assert transcript == turnfold.load(handler)
    assert calls_of(transcript) == REACT_CALLS
    assert ("AgentStream" in {type(e).__name__ for e in events}) is streaming


def test_A2_a_reply_react_could_not_parse_is_shown_live_only(
    react: tuple[Transcript, Any, Any, list[Any]],
) -> None:
    transcript, handler, _, events = react
    retried = [e for e in events if getattr(e, "retry_messages", None)]
    assert len(retried) == 1  # the agent asked the model again
    live = shown(transcript)
    position = live.index(("Thinking", runs.REACT_REPLIES[1]))
    notice = transcript.entries[position + 1]
    assert isinstance(notice, SystemNotice)
    assert (notice.level, notice.subtype) == ("warning", "retry")
    assert "Could not extract tool use" in notice.text
    # The memory never keeps it: the rest is what the load shows, the same calls and ids.
    loaded = turnfold.load(handler)
    assert live[:position] + live[position + 2 :] == shown(loaded)
    assert calls_of(transcript) == calls_of(loaded) == REACT_CALLS
    assert [c.call_id for c in transcript.tool_calls()] == [c.call_id for c in loaded.tool_calls()]
    assert transcript.metadata == loaded.metadata


def test_A2_a_react_answer_read_after_the_run_cut_it_keeps_its_thought() -> None:
    """The agent cuts its final reply's text to the answer when the run ends (``finalize``),
    in the very ``AgentOutput`` it streamed: a follower that reads the events late sees the
    cut text, and takes the thought from what was streamed."""
    handler, output, events = runs.run("react", retry=False)
    assert output.response.content == ANSWER
    transcript = Transcript()
    follower = llamaindex.Follower(transcript)
    for event in events:
        follower.feed(event)
    follower.close()
    assert transcript == turnfold.load(handler)


def test_A2_async_follow_of_a_react_run_yields_every_event() -> None:
    async def main() -> tuple[Any, Any, list[Any]]:
        handler = runs.react_agent(retry=False).run(user_msg=runs.PROMPT)
        followed = turnfold.follow(handler.stream_events(), display=False)
        passed = [event async for event in followed]
        await handler
        return handler, followed, passed

    handler, followed, passed = run_async(main())
    assert type(passed[-1]).__name__ == "StopEvent"
    assert followed.transcript == turnfold.load(handler)


# --- CodeAct ------------------------------------------------------------------------------------

CODE_CALLS = [
    ("execute", {"code": "print(1 + 2)"}, "success", "3\n", "msg-2"),
    ("execute", {"code": "explode('y')"}, "error", "boom: y", "msg-4"),
]


def test_A1_a_codeact_run_shows_its_code_as_calls_and_their_output_as_results(
    codeact: tuple[Transcript, Any, Any, list[Any]],
) -> None:
    live, handler, output, _ = codeact
    transcript = turnfold.load(handler)
    assert shown(transcript) == [
        ("UserMessage", runs.PROMPT),
        ("AssistantText", "Let me compute."),
        ("ToolCall", "execute"),
        ("ToolCall", "execute"),
        ("AssistantText", "1+2=3, and explode failed."),
    ]
    # The code's output is a user message in the memory ("Result of executing the code
    # given:"), not the user's: it is the call's result.
    assert [c[:4] for c in calls_of(transcript)] == [c[:4] for c in CODE_CALLS]
    assert [c.tool_id for c in output.tool_calls] == [c.call_id for c in transcript.tool_calls()]
    assert transcript.warnings == []
    assert live == transcript
    assert calls_of(live) == CODE_CALLS


def test_L3_a_codeact_memory_alone_settles_its_calls_with_no_outcome(
    codeact: tuple[Transcript, Any, Any, list[Any]],
) -> None:
    _, handler, _, _ = codeact
    dumped = [m.model_dump(mode="json") for m in llamaindex_runs.memory_of(handler)]
    transcript = turnfold.load(dumped)
    assert [type(e).__name__ for e in transcript.entries].count("UserMessage") == 1
    assert [(c.args, c.status) for c in transcript.tool_calls()] == [
        ({"code": "print(1 + 2)"}, "unknown"), ({"code": "explode('y')"}, "unknown"),
    ]  # fmt: skip


def test_A2_streamed_codeact_text_never_shows_the_code() -> None:
    from llama_index.core.agent.workflow import AgentStream

    transcript = Transcript()
    follower = llamaindex.Follower(transcript)
    for piece in ("Let me", " compute.\n<exe", "cute>\nprint(1)\n</execute>"):
        follower.feed(AgentStream(delta=piece, response="", current_agent_name="a"))
    assert [(type(e), e.text) for e in transcript.entries] == [
        (AssistantText, "Let me compute.\n"),
    ]


# --- a workflow of ReAct agents -----------------------------------------------------------------


def test_A1_A2_react_agents_handing_off_nest_as_function_agents_do() -> None:
    live, handler, _, _ = follow("react_handoff")
    transcript = turnfold.load(handler)
    assert live == transcript
    assert transcript.metadata["agent"] == "lead"
    assert transcript.metadata["system"] == "Route."
    assert shown(transcript) == [
        ("UserMessage", "what is 2+3"),
        ("Thinking", "math is needed."),
        ("ToolCall", "handoff"),
        ("AssistantText", "2+3=5"),
    ]
    (call,) = transcript.tool_calls()
    assert call.subagent is not None
    assert (call.subagent.name, call.subagent.task, call.subagent.tool_count) == (
        "math", "needs math", 1,
    )  # fmt: skip
    assert call.subagent.transcript is not None
    assert shown(call.subagent.transcript) == [
        ("Thinking", "add them."), ("ToolCall", "add"), ("Thinking", "done."),
    ]  # fmt: skip
    assert calls_of(call.subagent.transcript) == [
        ("add", {"a": 2, "b": 3}, "success", "5", "msg-4"),
    ]


# --- the parts ----------------------------------------------------------------------------------


def test_the_agents_own_prompt_is_read_out_of_the_prompt_react_and_codeact_compose() -> None:
    from llama_index.core.agent.workflow import AgentInput

    _, _, events = runs.run("codeact")
    inputs = [e for e in events if isinstance(e, AgentInput)]
    composed = inputs[0].input[0].content
    assert composed.startswith("You are a helpful AI assistant")
    assert llamaindex.agent_prompt(composed) is None  # a CodeActAgent with no system prompt
    assert llamaindex.agent_prompt(composed + "\nBe brief.") == "Be brief."
    assert llamaindex.agent_prompt("Route.") == "Route."  # a FunctionAgent's, as it is


def test_react_text_of_another_form_is_text() -> None:
    assert llamaindex.react_steps("Thought: x\nAction: add") is None  # no Action Input
    assert llamaindex.react_steps("I think so.\nAnswer: yes") is None
    assert llamaindex.react_steps("Thought: a\nb\nAnswer: c\nd") == [
        ("Thought", "a\nb"), ("Answer", "c\nd"),
    ]  # fmt: skip
    messages = [
        {"role": "user", "content": "q", "additional_kwargs": {}},
        {"role": "assistant", "content": "Thought: x\nAction: add", "additional_kwargs": {}},
        {"role": "user", "content": "Result of executing the code given:\n\n1",
         "additional_kwargs": {}},
    ]  # fmt: skip
    transcript = turnfold.load(messages, format="llamaindex")
    assert [type(e) for e in transcript.entries] == [UserMessage, AssistantText, UserMessage]
    assert not any(isinstance(e, Thinking) for e in transcript.entries)
