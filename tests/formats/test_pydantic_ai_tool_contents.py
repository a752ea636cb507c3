"""pydantic-ai: ``ToolReturn.content`` of some of a response's calls (spec A-1, A-2, L-1, L-4).

A tool that returns ``ToolReturn(return_value=..., content=[...])`` has its content sent to the
model as a ``UserPromptPart`` after all the request's returns; nothing in the part names its
call. With one such part per return (or one return) the call is told by order; with fewer
(only some tools gave content) by time. Runs of the real pydantic-ai (its ``FunctionModel``,
no network); the tools are ``sequential`` so that each result is handed on before the next tool
runs, as slower tools are in a real run.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import turnfold
from tests.formats import pydantic_ai_runs as runs
from turnfold.following import follow
from turnfold.formats.frameworks import pydantic_ai as adapter
from turnfold.model import AssistantText, Transcript, UserMessage

PROMPT = "Check the three screens."


def _agent() -> Any:
    """Three calls in one response: ``plainly`` (no content), ``look`` (content: a text and an
    image), ``plainly`` again; then ``look`` twice beside ``plainly``; then the answer."""
    from pydantic_ai import Agent, BinaryContent, ToolReturn
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    def respond(messages: list[Any], info: Any) -> Any:
        step = sum(1 for m in messages if isinstance(m, ModelRequest))
        if step == 1:
            names = [("plainly", "p1"), ("look", "l1"), ("plainly", "p2")]
        elif step == 2:
            names = [("look", "l2"), ("plainly", "p3"), ("look", "l3")]
        else:
            return ModelResponse(parts=[TextPart("All seen.")])
        return ModelResponse(parts=[ToolCallPart(n, {}, tool_call_id=i) for n, i in names])

    async def stream(messages: list[Any], info: Any) -> Any:
        for index, part in enumerate(respond(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            else:
                tool_call_id = part.tool_call_id
                yield {index: DeltaToolCall(part.tool_name, "{}", tool_call_id=tool_call_id)}

    agent = Agent(FunctionModel(respond, stream_function=stream))
    looks = iter(range(1, 10))

    @agent.tool_plain(sequential=True)
    def look() -> Any:
        """A screenshot."""
        image = BinaryContent(b"\x89PNG\r\n\x1a\n", media_type="image/png")
        content = [f"Screen {next(looks)}:", image]
        return ToolReturn(return_value="screenshot taken", content=content)

    @agent.tool_plain(sequential=True)
    def plainly() -> str:
        """A plain value."""
        return "plain"

    return agent


async def _events(agent: Any) -> tuple[Transcript, Any]:
    """The run's events followed, and the run's result (its last event carries it)."""
    transcript = Transcript(metadata={"source_format": adapter.NAME})
    follower = adapter.Follower(transcript)
    async with agent.run_stream_events(PROMPT) as stream:
        follower.begin(stream)
        async for event in stream:
            follower.feed(event)
    follower.close()
    return transcript, event.result


async def _nodes(agent: Any) -> tuple[Transcript, Any]:
    """The run's nodes followed (``agent.iter()``), and the run's result."""
    async with agent.iter(PROMPT) as run:
        followed = follow(run, display=False)
        async for _ in followed:
            pass
    return followed.transcript, run.result


def _results(transcript: Transcript) -> dict[str, tuple[str | None, int, bool]]:
    """Each call's result text, how many images it has, and whether it holds tool content."""
    return {
        call.call_id: (
            call.result.text if call.result else None,
            len(call.result.images) if call.result else 0,
            call.meta.get("user_content") is True,
        )
        for call in transcript.tool_calls()
    }


EXPECTED = {
    "p1": ("plain", 0, False),
    "l1": ("screenshot taken\n\nScreen 1:", 1, True),
    "p2": ("plain", 0, False),
    "l2": ("screenshot taken\n\nScreen 2:", 1, True),
    "p3": ("plain", 0, False),
    "l3": ("screenshot taken\n\nScreen 3:", 1, True),
}


def test_A2_contents_of_some_calls_load_with_their_calls_as_followed(tmp_path: Path) -> None:
    """Fewer ``ToolReturn.content`` parts than returns in a request: the run loaded (its
    result, its messages, their JSON saved to a file) shows each with its call's result, as
    following the same run's events links it; none is a prompt of the user's splitting the
    turn. Following the run's nodes reads its messages, as a load does."""
    for follower in (_events, _nodes):
        followed, result = runs.on_thread(lambda run=follower: asyncio.run(run(_agent())))
        assert followed.warnings == [], follower.__name__
        assert _results(followed) == EXPECTED, follower.__name__
        saved = tmp_path / f"{follower.__name__}.json"
        saved.write_bytes(result.all_messages_json())
        forms = {
            "result": turnfold.load(result),
            "messages": turnfold.load(result.all_messages()),
            "saved": turnfold.load(saved),
        }
        for name, loaded in forms.items():
            assert loaded.warnings == [], name
            assert [e.text for e in loaded.entries if isinstance(e, UserMessage)] == [PROMPT]
            assert _results(loaded) == EXPECTED, name
            assert isinstance(loaded.entries[-1], AssistantText), name
        assert forms["result"].entries == followed.entries, follower.__name__


def test_L4_contents_whose_calls_the_times_cannot_tell_stay_the_user_s_with_a_warning() -> None:
    """A saved request whose parts have lost their timestamps: the content parts cannot be
    told by time, so they stay the user's (nothing dropped), and a warning says they may be
    tools' content."""
    result = runs.on_thread(lambda: _agent().run_sync(PROMPT))
    messages = json.loads(result.all_messages_json())
    for message in messages:
        for part in message["parts"]:
            part.pop("timestamp", None)
    loaded = turnfold.load(json.dumps(messages))
    prompts = [e.text for e in loaded.entries if isinstance(e, UserMessage)]
    assert prompts == [PROMPT, "Screen 1:", "Screen 2:", "Screen 3:"]
    assert [r[2] for r in _results(loaded).values()] == [False] * 6
    reasons = [w.reason for w in loaded.warnings]
    assert len(reasons) == 2
    assert all("may be tools' ToolReturn.content" in r for r in reasons)
