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


# --- a run that ends waiting on deferred calls, and one whose retries run out -------------------

#: A 1×1 PNG, the image a tool returns.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f00f0004850180848a9921000000004945414e44ae426082"
)
DEFERRED_PROMPT = "Take a photo, delete /a, ask me for a name and fetch the report."


def _deferred_parts() -> list[Any]:
    """One response: ``photo`` returns an image (``BinaryContent``, alone, not in a list);
    ``delete`` needs approval (``requires_approval=True``); ``ask`` defers itself as a question
    (``CallDeferred(kind="question")``, with metadata); ``fetch`` is run outside the agent
    (``CallDeferred()``)."""
    from pydantic_ai.messages import ThinkingPart, ToolCallPart

    return [
        ThinkingPart("Photo first, then the rest."),
        ToolCallPart("photo", {}, tool_call_id="p1"),
        ToolCallPart("delete", {"path": "/a"}, tool_call_id="d1"),
        ToolCallPart("ask", {"question": "Which name?"}, tool_call_id="q1"),
        ToolCallPart("fetch", {"url": "https://example.com/r"}, tool_call_id="x1"),
    ]


def deferred_agent() -> Any:
    """The agent of the deferred run (its output type admits ``DeferredToolRequests``)."""
    from pydantic_ai import Agent, BinaryContent, CallDeferred, DeferredToolRequests
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import DeltaThinkingPart, DeltaToolCall, FunctionModel

    def respond(messages: list[Any], info: Any) -> Any:
        if _step(messages) == 1:
            return ModelResponse(parts=_deferred_parts(), model_name="scripted-1")
        return ModelResponse(parts=[TextPart("done")], model_name="scripted-1")

    async def stream(messages: list[Any], info: Any) -> AsyncIterator[Any]:
        if _step(messages) > 1:
            yield "done"
            return
        for index, part in enumerate(_deferred_parts()):
            if isinstance(part, ToolCallPart):
                args = json.dumps(part.args)
                yield {index: DeltaToolCall(part.tool_name, args, tool_call_id=part.tool_call_id)}
            else:
                yield {index: DeltaThinkingPart(content=part.content)}

    deferred = Agent(
        FunctionModel(respond, stream_function=stream), output_type=[str, DeferredToolRequests]
    )

    @deferred.tool_plain
    def photo() -> Any:  # a BinaryContent (a local import: no annotation can name it)
        """Take a photo."""
        return BinaryContent(PNG, media_type="image/png")

    @deferred.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a path."""
        return f"deleted {path}"

    @deferred.tool_plain
    def ask(question: str) -> str:
        """Ask the user."""
        raise CallDeferred({"form": "name"}, kind="question")

    @deferred.tool_plain
    def fetch(url: str) -> str:
        """Fetched by the caller."""
        raise CallDeferred()

    return deferred


def deferred_run() -> Any:
    """The deferred run's ``AgentRunResult`` (its output a ``DeferredToolRequests``)."""
    return on_thread(lambda: deferred_agent().run_sync(DEFERRED_PROMPT))


async def _deferred_followed(follow: Callable[[Any], Any]) -> tuple[Any, Any]:
    async with deferred_agent().iter(DEFERRED_PROMPT) as agent_run:
        followed = follow(agent_run)
        async for _ in followed:
            pass
    return followed, agent_run.result


def deferred_followed(follow: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``follow(agent_run)`` of the deferred run's ``agent.iter()``, consumed: what ``follow``
    returned, and the run's result."""
    followed: tuple[Any, Any] = on_thread(lambda: asyncio.run(_deferred_followed(follow)))
    return followed


async def _deferred_events() -> list[Any]:
    async with deferred_agent().run_stream_events(DEFERRED_PROMPT) as events:
        seen: list[Any] = [event async for event in events]
    return seen


def deferred_events() -> list[Any]:
    """The deferred run's ``run_stream_events()`` events (``DeferredToolRequestsEvent``
    among them)."""
    events: list[Any] = on_thread(lambda: asyncio.run(_deferred_events()))
    return events


def retries_agent() -> Any:
    """An agent whose tool always raises ``ModelRetry``: its third call (``retries=2``) ends
    the run in ``UnexpectedModelBehavior``."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> Any:
        step = _step(messages)
        call = ToolCallPart("flaky", {"n": step}, tool_call_id=f"r{step}")
        return ModelResponse(parts=[call], model_name="scripted-1")

    retrying = Agent(FunctionModel(respond), retries=2)

    @retrying.tool_plain
    def flaky(n: int) -> str:
        """Always asks for a retry."""
        raise ModelRetry(f"try again ({n})")

    return retrying


async def _retries_followed(follow: Callable[[Any], Any]) -> tuple[Any, BaseException, list[Any]]:
    from pydantic_ai import capture_run_messages

    with capture_run_messages() as captured:
        try:
            async with retries_agent().iter("go") as agent_run:
                followed = follow(agent_run)
                async for _ in followed:
                    pass
        except Exception as exc:  # the run's own end: its retries ran out
            return followed, exc, captured
    raise AssertionError("the retries did not run out")


def retries_followed(follow: Callable[[Any], Any]) -> tuple[Any, BaseException, list[Any]]:
    """``follow(agent_run)`` of the run whose retries run out, consumed to its exception:
    what ``follow`` returned, the exception, and the messages ``capture_run_messages`` kept."""
    ended: tuple[Any, BaseException, list[Any]] = on_thread(
        lambda: asyncio.run(_retries_followed(follow))
    )
    return ended


async def _stopped_run(agent: Any, kwargs: dict[str, Any]) -> tuple[Any, Any, BaseException, Any]:
    from pydantic_ai import capture_run_messages

    from turnfold.following import follow

    with capture_run_messages() as captured:
        async with agent.iter("go", **kwargs) as agent_run:
            followed = follow(agent_run, display=False)
            try:
                async for _ in followed:
                    pass
            except Exception as exc:
                return agent_run, followed, exc, captured
    raise AssertionError("the run was not stopped")


def stopped_run(agent: Any, **kwargs: Any) -> tuple[Any, Any, BaseException, list[Any]]:
    """``turnfold.follow`` of ``agent.iter("go", **kwargs)``, consumed to the exception that
    stops the run, inside ``capture_run_messages``: the ``AgentRun`` a notebook is left holding,
    the follow, the exception, and the messages pydantic-ai kept."""
    stopped: tuple[Any, Any, BaseException, list[Any]] = on_thread(
        lambda: asyncio.run(_stopped_run(agent, kwargs))
    )
    return stopped


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
