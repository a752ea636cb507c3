"""AutoGen chunks that turn out to be the model's thought leave no empty text (spec A-2).

A real ``AssistantAgent`` with ``model_client_stream=True`` on AutoGen's offline
``ReplayChatCompletionClient``, which streams only plain-string responses: the subclass below
streams each scripted ``CreateResult``'s chunks first, as autogen-ext's own clients do:

- the OpenAI client streams text beside tool calls, which becomes the result's ``thought``;
- it streams a model's ``reasoning_content`` wrapped in ``<think>``…``</think>`` (an R1
  model writes the same in its content), then the answer's text;
- the Anthropic client streams its thinking deltas, then the text deltas, unmarked.

``run_stream`` then yields the chunks (``ModelClientStreamingChunkEvent``, their
``full_message_id`` the message's id), a ``ThoughtEvent`` of that id, and the answer under a
new id. Followed, these used to leave an empty ``AssistantText`` (an empty line in the
outline) before each thought.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext")

import turnfold
from tests.formats import autogen_runs as runs
from turnfold.formats.frameworks import autogen
from turnfold.model import AssistantText, Thinking, ToolCall, Transcript, UserMessage

PROMPT = "Add 1 and 2, twice."


def _client(scripted: list[tuple[Any, list[str]]]) -> Any:
    from autogen_core.models import CreateResult
    from autogen_ext.models.replay import ReplayChatCompletionClient

    class StreamingReplay(ReplayChatCompletionClient):
        """The replay client, each scripted result streamed as its chunks first."""

        async def create_stream(  # type: ignore[override]
            self, messages: Any, **kwargs: Any
        ) -> AsyncGenerator[str | CreateResult, None]:
            for chunk in scripted[self._current_index][1]:
                yield chunk
            async for item in super().create_stream(messages, **kwargs):
                yield item

    return StreamingReplay([result for result, _ in scripted], model_info=runs._MODEL_INFO)


def _run() -> list[Any]:
    """``run_stream``'s items: a call streamed with text beside it (OpenAI), an answer
    after a ``<think>`` section (OpenAI's reasoning_content), a call, then an answer after
    unmarked thinking (Anthropic)."""
    from autogen_agentchat.agents import AssistantAgent

    client = _client(
        [
            (
                runs._calls(1, ("call_1", "add", '{"a": 1, "b": 2}'), thought="I add first."),
                ["I add ", "first."],
            ),
            (
                runs._calls(2, ("call_2", "add", '{"a": 1, "b": 2}')),
                [],
            ),
            (
                runs._text(3, "Twice 3.", thought="Both are 3."),
                ["<thi", "nk>Both ", "are 3.", "</think>", "Twice ", "3."],
            ),
        ]
    )
    agent = AssistantAgent(
        "calc",
        model_client=client,
        tools=[runs.add],
        model_client_stream=True,
        max_tool_iterations=5,
    )

    async def collect() -> list[Any]:
        return [item async for item in agent.run_stream(task=PROMPT)]

    return runs.in_thread(collect())


def _anthropic_run() -> list[Any]:
    """An answer whose thinking streamed unmarked before its text (Anthropic's client)."""
    from autogen_agentchat.agents import AssistantAgent

    client = _client([(runs._text(1, "It is 3.", thought="Sum it."), ["Sum ", "it.", "It is 3."])])
    agent = AssistantAgent("calc", model_client=client, model_client_stream=True)

    async def collect() -> list[Any]:
        return [item async for item in agent.run_stream(task="1+2?")]

    return runs.in_thread(collect())


def follow(events: list[Any]) -> Transcript:
    transcript = Transcript()
    follower = autogen.Follower(transcript)
    for event in events:
        follower.feed(event)
    follower.close()
    return transcript


def shown(transcript: Transcript) -> list[Any]:
    out: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result else None
            out.append(("call", entry.call_id, entry.args, entry.status, result))
        elif isinstance(entry, Thinking):
            out.append(("Thinking", entry.text, entry.streaming))
        else:
            out.append((type(entry).__name__, getattr(entry, "text", None)))
    return out


@pytest.fixture(scope="module")
def events() -> list[Any]:
    return _run()


def test_A2_the_run_streams_chunks_that_turn_out_to_be_thoughts(events: list[Any]) -> None:
    kinds = [type(e).__name__ for e in events]
    assert kinds.count("ModelClientStreamingChunkEvent") == 8
    assert kinds.count("ThoughtEvent") == 2


def test_A2_chunks_that_turn_out_to_be_a_thought_leave_no_empty_text(events: list[Any]) -> None:
    transcript = follow(events)
    assert not [e for e in transcript.entries if isinstance(e, AssistantText) and not e.text]
    assert shown(transcript) == [
        ("UserMessage", PROMPT),
        ("AssistantText", "I add first."),  # streamed beside the call: the note it was
        ("call", "call_1", {"a": 1, "b": 2}, "success", "3"),
        ("call", "call_2", {"a": 1, "b": 2}, "success", "3"),
        ("Thinking", "Both are 3.", False),  # its <think> section streamed as thinking
        ("AssistantText", "Twice 3."),
    ]
    note = transcript.entries[1]
    assert note.meta["streamed_as"] == "thinking"
    assert transcript.warnings == []


def test_A2_a_think_section_and_its_answer_end_as_the_load_of_the_task_result(
    events: list[Any],
) -> None:
    """Where the chunks said it was thinking, the follow ends as the load of the
    ``TaskResult`` (which holds no chunks): the thinking, then the answer, each once."""
    followed = follow(events)
    loaded = turnfold.load(events[-1])
    assert shown(followed)[-2:] == shown(loaded)[-2:]
    thinking = followed.entries[-2]
    assert isinstance(thinking, Thinking)
    assert thinking.timestamp == loaded.entries[-2].timestamp  # the ThoughtEvent's time
    answer = followed.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert answer.usage.output_tokens == 3


def test_A2_thinking_streamed_unmarked_before_the_answer_is_kept_once() -> None:
    events = _anthropic_run()
    transcript = follow(events)
    assert shown(transcript) == [
        ("UserMessage", "1+2?"),
        ("AssistantText", "Sum it."),
        ("AssistantText", "It is 3."),
    ]
    assert isinstance(transcript.entries[0], UserMessage)
    assert transcript.entries[1].meta["streamed_as"] == "thinking"


def test_A2_thinking_grows_while_its_chunks_stream() -> None:
    """Live, the ``<think>`` chunks grow a streaming thinking (a partial tag shows nothing),
    and the text after it an answer."""
    from autogen_agentchat.messages import ModelClientStreamingChunkEvent

    transcript = Transcript()
    follower = autogen.Follower(transcript)
    seen: list[Any] = []
    for part in ["<thi", "nk>Both ", "are 3.", "</think>", "Twice"]:
        chunk = ModelClientStreamingChunkEvent(content=part, source="calc", full_message_id="m1")
        follower.feed(chunk)
        seen.append(shown(transcript))
    assert transcript.warnings == []
    assert seen[0] == []
    assert seen[1] == [("Thinking", "Both ", True)]
    assert seen[4] == [("Thinking", "Both are 3.", True), ("AssistantText", "Twice")]


def test_A1_a_saved_run_stream_with_thought_chunks_loads_without_empty_text(
    events: list[Any],
) -> None:
    """The same items saved (``model_dump(mode="json")`` each) and loaded: as followed."""
    import json

    saved = json.dumps([event.model_dump(mode="json") for event in events])
    transcript = turnfold.load(saved)
    assert transcript.warnings == []
    assert shown(transcript) == shown(follow(events))
