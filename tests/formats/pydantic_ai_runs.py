"""Runs of the real pydantic-ai, offline, for the "pydantic-ai" format's tests and fixture
(issue 22).

One agent on pydantic-ai's own ``FunctionModel`` (a function in place of the model, so no
network; ``stream_function`` for the streamed runs): it thinks, writes a note and calls ``add``
(succeeds) and ``explode`` (raises ``ToolFailed``: the return's ``outcome`` is ``failed``) in
one response, its arguments once a dict and once a JSON string; then ``flaky`` (raises
``ModelRetry`` the first time: ``outcome`` ``retried``) and, after the retry, ``flaky`` again
beside ``research``, a tool that runs a second agent (pydantic-ai's "agent delegation": the
child's messages are not in the parent's); then it answers. Every response has its own usage.

``python tests/formats/pydantic_ai_runs.py`` rewrites the fixture under
``tests/fixtures/frameworks/pydantic-ai/`` (``AgentRunResult.all_messages_json()``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "pydantic-ai"
PROMPT = "Add 1 and 2, try the exploding tool, then the flaky one, and ask the researcher."
ANSWER = "1+2=3; explode failed; flaky worked on the second try; tools fail."
INSTRUCTIONS = "You are terse."
SYSTEM_PROMPT = "You help with arithmetic."


def _parts(step: int) -> list[Any]:
    """The parts of the model's response number ``step`` (1-based), the same whether streamed
    or not."""
    from pydantic_ai.messages import TextPart, ThinkingPart, ToolCallPart

    if step == 1:
        return [
            ThinkingPart("First add, then the risky tool."),
            TextPart("Adding first."),
            ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id="call_1"),
            ToolCallPart("explode", '{"x": "y"}', tool_call_id="call_2"),
        ]
    if step == 2:
        return [ToolCallPart("flaky", {"n": 1}, tool_call_id="call_3")]
    if step == 3:
        return [
            ToolCallPart("flaky", {"n": 2}, tool_call_id="call_4"),
            ToolCallPart("research", {"question": "why do tools fail?"}, tool_call_id="call_5"),
        ]
    return [TextPart(ANSWER)]


def _step(messages: list[Any]) -> int:
    """Which response the model is asked for: one per request of the history so far."""
    from pydantic_ai.messages import ModelRequest

    return sum(1 for m in messages if isinstance(m, ModelRequest))


def _usage(step: int) -> Any:
    from pydantic_ai.usage import RequestUsage

    return RequestUsage(
        input_tokens=100 * step, output_tokens=10 * step, cache_read_tokens=step, details={"x": 1}
    )


def _respond(messages: list[Any], info: Any) -> Any:
    from pydantic_ai.messages import ModelResponse

    step = _step(messages)
    return ModelResponse(parts=_parts(step), usage=_usage(step), model_name="scripted-1")


async def _stream(messages: list[Any], info: Any) -> AsyncIterator[Any]:
    """The same responses, streamed: thinking and calls as deltas, text in two chunks."""
    from pydantic_ai.messages import TextPart, ThinkingPart, ToolCallPart
    from pydantic_ai.models.function import DeltaThinkingPart, DeltaToolCall

    for index, part in enumerate(_parts(_step(messages))):
        if isinstance(part, ThinkingPart):
            yield {index: DeltaThinkingPart(content=part.content)}
        elif isinstance(part, TextPart):
            half = len(part.content) // 2
            yield part.content[:half]
            yield part.content[half:]
        elif isinstance(part, ToolCallPart):
            args = part.args if isinstance(part.args, str) else json.dumps(part.args)
            yield {index: DeltaToolCall(name=part.tool_name, tool_call_id=part.tool_call_id)}
            yield {index: DeltaToolCall(json_args=args[:5])}
            yield {index: DeltaToolCall(json_args=args[5:])}


def _researcher() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    def answer(messages: list[Any], info: Any) -> Any:
        return ModelResponse(parts=[TextPart("Because inputs are bad.")], model_name="child-1")

    async def stream(messages: list[Any], info: Any) -> AsyncIterator[str]:
        yield "Because inputs are bad."

    return Agent(FunctionModel(answer, stream_function=stream), name="researcher")


def agent() -> Any:
    """The scripted agent (a new one each time: tools keep no state between runs)."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.models.function import FunctionModel

    researcher = _researcher()
    main = Agent(
        FunctionModel(_respond, stream_function=_stream),
        name="arithmetic",
        instructions=INSTRUCTIONS,
        system_prompt=SYSTEM_PROMPT,
    )

    @main.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @main.tool_plain
    def explode(x: str) -> str:
        """Always fails."""
        raise ToolFailed(f"boom: {x}")

    @main.tool_plain
    def flaky(n: int) -> str:
        """Fails on the first try."""
        if n == 1:
            raise ModelRetry("n=1 is unlucky; try n=2")
        return f"ok with n={n}"

    @main.tool_plain
    async def research(question: str) -> str:
        """Ask the researcher agent."""
        result = await researcher.run(question)
        return str(result.output)

    return main


def on_thread(function: Callable[[], Any]) -> Any:
    """``function()`` on a thread of its own: ``run_sync`` and ``asyncio.run`` refuse to start
    beside an event loop an earlier test left running."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function).result()


def run() -> Any:
    """The scripted run's ``AgentRunResult``."""
    return on_thread(lambda: agent().run_sync(PROMPT))


async def _iter_nodes() -> tuple[list[Any], Any]:
    nodes = []
    async with agent().iter(PROMPT) as agent_run:
        async for node in agent_run:
            nodes.append(node)
    assert agent_run.result is not None
    return nodes, agent_run.result


def iter_nodes() -> tuple[list[Any], Any]:
    """The nodes ``agent.iter()`` yields (``UserPromptNode`` … ``End``) and the run's result."""
    return on_thread(lambda: asyncio.run(_iter_nodes()))


async def _stream_events() -> list[Any]:
    async with agent().run_stream_events(PROMPT) as events:
        return [event async for event in events]


def stream_events() -> list[Any]:
    """The events ``agent.run_stream_events()`` yields, ending with ``AgentRunResultEvent``."""
    return on_thread(lambda: asyncio.run(_stream_events()))


async def _stream_followed(follower: Any) -> list[Any]:
    seen = []
    async with agent().run_stream_events(PROMPT) as events:
        follower.begin(events)
        async for event in events:
            follower.feed(event)
            seen.append(event)
    follower.close()
    return seen


def stream_followed(follower: Any) -> list[Any]:
    """The events of ``run_stream_events()``, fed to ``follower`` as they come, after
    ``follower.begin(events)`` (the handle, which holds the prompt the events lack)."""
    return on_thread(lambda: asyncio.run(_stream_followed(follower)))


def handler_events() -> tuple[list[Any], Any]:
    """The events ``run_sync(event_stream_handler=...)`` hands its handler, and the result."""
    seen: list[Any] = []

    async def handler(ctx: Any, events: AsyncIterator[Any]) -> None:
        async for event in events:
            seen.append(event)

    result = on_thread(lambda: agent().run_sync(PROMPT, event_stream_handler=handler))
    return seen, result


def long_run(responses: int) -> Any:
    """A run of ``responses`` model responses, each calling ``add`` once, then an answer:
    ``2 * responses + 2`` messages (for the speed measurement)."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage, UsageLimits

    def respond(messages: list[Any], info: Any) -> Any:
        step = _step(messages)
        usage = RequestUsage(input_tokens=step, output_tokens=1)
        if step > responses:
            return ModelResponse(parts=[TextPart("done")], usage=usage)
        call = ToolCallPart("add", {"a": step, "b": 1}, tool_call_id=f"call_{step}")
        return ModelResponse(parts=[TextPart(f"step {step}"), call], usage=usage)

    long = Agent(FunctionModel(respond))

    @long.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    limits = UsageLimits(request_limit=None, tool_calls_limit=None)
    return on_thread(lambda: long.run_sync("count", usage_limits=limits))


def documents() -> dict[str, Any]:
    """File name → the JSON value saved under it (pydantic-ai's own serialisation)."""
    from importlib.metadata import version

    result = run()
    name = f"pydantic-ai_v{version('pydantic-ai-slim')}"
    return {f"{name}_all-messages_retry-failed.json": json.loads(result.all_messages_json())}


def write() -> list[Path]:
    """Write the fixture; the paths written."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, value in documents().items():
        path = FIXTURES / name
        path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    for written in write():
        print(written)


if __name__ == "__main__":
    main()
