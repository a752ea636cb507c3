"""Real Semantic Kernel (``semantic-kernel`` 1.45.0) runs, offline: SK's own
``OpenAIChatCompletion`` connector talking to a scripted Chat Completions endpoint (an
``httpx.MockTransport`` under the real ``openai`` client: nothing reaches the network), with a
plugin of real kernel functions invoked by SK's auto function calling
(``FunctionChoiceBehavior.Auto()``); one of them raises.

Semantic Kernel is not in the ``frameworks`` extra: it pins ``pydantic<2.14`` and
``mcp<2.0`` against the test set's pins (pydantic 2.14.4, mcp 2.1.1), and pulls numpy, scipy,
aiortc, the Azure AI SDKs and OpenTelemetry (a 516 MB venv, 1.5 minutes to install). It is
run in a venv of its own::

    python3 -m venv /tmp/sk && /tmp/sk/bin/pip install semantic-kernel==1.45.0
    PYTHONPATH=/path/to/turnfold/src /tmp/sk/bin/python \\
        /path/to/turnfold/tests/formats/semantic_kernel_runs.py

which writes the committed fixtures (:func:`write_fixtures`): a ``ChatHistory``'s
``serialize()`` (what ``store_chat_history_to_file`` writes), an agent thread's messages saved
the same way, the events of an agent's streamed run (``stream_events``) one
``model_dump_json()`` a line, and a ``ChatHistorySummarizationReducer``'s ``serialize()`` after
it summarised a turn (its summariser the same scripted service).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
from openai import AsyncOpenAI
from semantic_kernel import Kernel
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import (
    OpenAIChatCompletion,
    OpenAIChatPromptExecutionSettings,
)
from semantic_kernel.contents import ChatHistory, ChatHistorySummarizationReducer
from semantic_kernel.functions import kernel_function

from turnfold.formats.frameworks.semantic_kernel import stream_events

FIXTURES = Path(__file__).parent.parent / "fixtures" / "frameworks" / "semantic-kernel"
VERSION = "1.45.0"
MODEL = "gpt-4o-mini-2024-07-18"


def calls(*pairs: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """A scripted reply making tool calls: ``(id, plugin-function, arguments)`` each."""
    return {
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in pairs
        ]
    }


class ScriptedEndpoint:
    """Answers each Chat Completions request with the next scripted reply, as JSON or, for a
    ``stream: true`` request, as the SSE chunks OpenAI sends (usage in a last chunk, since SK
    asks for ``include_usage``). Each response reports its own token counts."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        number = len(self.requests)
        reply = self.replies.pop(0)
        usage = {
            "prompt_tokens": 40 + 10 * number,
            "completion_tokens": 5 + number,
            "total_tokens": 45 + 11 * number,
            "prompt_tokens_details": {"cached_tokens": 16 if number > 1 else 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
        base = {"id": f"chatcmpl-{number}", "created": 1767225600 + 7 * number, "model": MODEL}
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply.get("content"), **reply}
            choice = {"index": 0, "message": message, "finish_reason": finish}
            document = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            return httpx.Response(200, json=document)
        chunks: list[dict[str, Any]] = []
        if reply.get("content"):
            for piece in reply["content"].split(" "):
                text = piece if not chunks else f" {piece}"
                chunks.append({"index": 0, "delta": {"content": text}, "finish_reason": None})
        for index, call in enumerate(reply.get("tool_calls", [])):
            delta = {"tool_calls": [{"index": index, **call}]}
            chunks.append({"index": 0, "delta": delta, "finish_reason": None})
        chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
        events = [{**base, "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
        events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return httpx.Response(200, text=sse, headers={"content-type": "text/event-stream"})


class MathPlugin:
    @kernel_function(description="Adds two numbers.")
    def add(self, a: int, b: int) -> int:
        return a + b

    @kernel_function(description="Always fails.")
    def explode(self, x: str) -> str:
        raise ValueError(f"boom: {x}")


def kernel_on(endpoint: ScriptedEndpoint) -> tuple[Kernel, OpenAIChatCompletion]:
    client = AsyncOpenAI(
        api_key="offline", http_client=httpx.AsyncClient(transport=httpx.MockTransport(endpoint))
    )
    service = OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)
    kernel = Kernel()
    kernel.add_service(service)
    kernel.add_plugin(MathPlugin(), "math")
    return kernel, service


async def chat_history_run() -> ChatHistory:
    """Two turns of a ChatHistory driven by the service itself: two calls in one response
    (``add`` succeeds, ``explode`` raises), the answer; then one call and the answer."""
    endpoint = ScriptedEndpoint(
        [
            calls(
                ("call_add", "math-add", {"a": 2, "b": 3}),
                ("call_boom", "math-explode", {"x": "y"}),
            ),
            {"content": "2 + 3 = 5; explode failed with boom: y."},
            calls(("call_add2", "math-add", {"a": 10, "b": 1})),
            {"content": "10 + 1 = 11."},
        ]
    )
    kernel, service = kernel_on(endpoint)
    settings = OpenAIChatPromptExecutionSettings(
        function_choice_behavior=FunctionChoiceBehavior.Auto()
    )
    history = ChatHistory(system_message="You add things with the math plugin.")
    for prompt in ("Add 2 and 3, then explode y.", "And 10 plus 1?"):
        history.add_user_message(prompt)
        answer = await service.get_chat_message_content(history, settings, kernel=kernel)
        assert answer is not None
        history.add_message(answer)
    return history


def agent_on(endpoint: ScriptedEndpoint) -> ChatCompletionAgent:
    kernel, _ = kernel_on(endpoint)
    return ChatCompletionAgent(
        kernel=kernel,
        id="calc-agent",  # SK draws a random one: the fixtures stay the same each run
        name="Calc",
        instructions="You add things with the math plugin.",
        function_choice_behavior=FunctionChoiceBehavior.Auto(),
    )


async def agent_run() -> tuple[ChatHistoryAgentThread, list[Any]]:
    """A ChatCompletionAgent's two ``get_response`` calls on one thread; the thread and the
    response items."""
    endpoint = ScriptedEndpoint(
        [
            calls(
                ("call_add", "math-add", {"a": 2, "b": 3}),
                ("call_boom", "math-explode", {"x": "y"}),
            ),
            {"content": "2 + 3 = 5; explode failed."},
            {"content": "Nothing else to add."},
        ]
    )
    agent = agent_on(endpoint)
    thread = ChatHistoryAgentThread()
    items = []
    for prompt in ("Add 2 and 3, then explode y.", "Anything else?"):
        item = await agent.get_response(messages=prompt, thread=thread)
        items.append(item)
    return thread, items


def stream_script() -> ScriptedEndpoint:
    return ScriptedEndpoint(
        [
            calls(
                ("call_add", "math-add", {"a": 2, "b": 3}),
                ("call_boom", "math-explode", {"x": "y"}),
            ),
            {"content": "2 + 3 = 5; explode failed."},
        ]
    )


async def streamed_run() -> list[Any]:
    """The events of an agent's ``invoke_stream`` run as :func:`stream_events` gives them."""
    agent = agent_on(stream_script())
    thread = ChatHistoryAgentThread()
    return [
        e
        async for e in stream_events(agent, messages="Add 2 and 3, then explode y.", thread=thread)
    ]


#: What the scripted summariser answers the reducer's summarisation request with.
SUMMARY = "The user asked to add 2 and 3 and to explode y; 2 + 3 = 5 and explode failed."


async def summarized_run() -> tuple[ChatHistorySummarizationReducer, ScriptedEndpoint]:
    """Two turns of a ``ChatHistorySummarizationReducer`` (SK's own summarising history) driven
    as SK's chatbot sample drives it: each prompt added, then ``reduce()``, then the answer.
    Its summariser is the same service: before the second answer the reducer replaces the first
    turn with the summary it asked the service for (a message of its own response, marked
    ``metadata["__summary__"]``); the second turn's call and answer follow it. The reducer and
    the endpoint (its requests: the summarisation request among them)."""
    endpoint = ScriptedEndpoint(
        [
            calls(
                ("call_add", "math-add", {"a": 2, "b": 3}),
                ("call_boom", "math-explode", {"x": "y"}),
            ),
            {"content": "2 + 3 = 5; explode failed with boom: y."},
            {"content": SUMMARY},  # the summarisation request
            calls(("call_add2", "math-add", {"a": 10, "b": 1})),
            {"content": "10 + 1 = 11."},
        ]
    )
    kernel, service = kernel_on(endpoint)
    settings = OpenAIChatPromptExecutionSettings(
        function_choice_behavior=FunctionChoiceBehavior.Auto()
    )
    history = ChatHistorySummarizationReducer(
        service=service, target_count=2, system_message="You add things with the math plugin."
    )
    for prompt in ("Add 2 and 3, then explode y.", "And 10 plus 1?"):
        history.add_user_message(prompt)
        await history.reduce()  # the first time too short: nothing to summarise
        answer = await service.get_chat_message_content(history, settings, kernel=kernel)
        assert answer is not None
        history.add_message(answer)
    return history, endpoint


async def thread_history(thread: ChatHistoryAgentThread) -> ChatHistory:
    return ChatHistory(messages=[m async for m in thread.get_messages()])


def write_fixtures() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    history = asyncio.run(chat_history_run())
    (FIXTURES / f"semantic-kernel_v{VERSION}_chat-history_two-turns.json").write_text(
        history.serialize() + "\n"
    )
    thread, _ = asyncio.run(agent_run())
    saved = asyncio.run(thread_history(thread))
    (FIXTURES / f"semantic-kernel_v{VERSION}_agent-thread_calc.json").write_text(
        saved.serialize() + "\n"
    )
    events = asyncio.run(streamed_run())
    lines = [getattr(e, "message", e).model_dump_json(exclude_none=True) for e in events]
    (FIXTURES / f"semantic-kernel_v{VERSION}_agent-stream_calc.jsonl").write_text(
        "\n".join(lines) + "\n"
    )
    summarized, _ = asyncio.run(summarized_run())
    (FIXTURES / f"semantic-kernel_v{VERSION}_summarization-reducer_two-turns.json").write_text(
        summarized.serialize() + "\n"
    )


if __name__ == "__main__":
    sys.exit(write_fixtures())
