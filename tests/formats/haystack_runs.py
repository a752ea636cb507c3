"""Scripted Haystack agent runs, offline, for the haystack tests and fixtures.

The model is :class:`ScriptedChatGenerator`, a ``@component`` chat generator that replies from
a script the way ``OpenAIChatGenerator`` does: each reply is a real OpenAI ``ChatCompletion``
(or, when a ``streaming_callback`` is given, its ``ChatCompletionChunk`` stream) turned into
Haystack's ``ChatMessage`` / ``StreamingChunk`` by Haystack's own OpenAI conversion functions,
so the messages' ``meta`` (``model``, ``index``, ``finish_reason``, ``usage``, and
``completion_start_time`` when streamed) is exactly what a real run writes. OpenAI's chat
completions carry no reasoning, so a scripted reasoning is added as the generators that have it
add theirs (a ``ReasoningContent`` before the text; streamed, ``StreamingChunk(reasoning=…)``).

The agents are the real ``haystack.components.agents.Agent`` with real ``Tool``s:

- ``solo``: thinks and calls ``add`` (succeeds), calls ``explode`` (raises: the ``ToolInvoker``
  makes its result ``error=True``), answers;
- ``nested``: calls ``helper``, a ``ComponentTool`` wrapping a second ``Agent`` (which calls
  ``add`` and answers), then answers;
- ``exit``: an ``Agent`` with ``exit_conditions=["finish"]`` that calls ``finish``.

``python tests/formats/haystack_runs.py`` writes the fixtures under
``tests/fixtures/frameworks/haystack/`` (``[m.to_dict() for m in result["messages"]]``, as users
save them). Telemetry is off (``HAYSTACK_TELEMETRY_ENABLED=False``) before Haystack is imported.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

PROMPT = "add 1 and 2, then explode"
MODEL = "gpt-4o-mini-2024-07-18"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "haystack"

#: One scripted reply: (reasoning or None, text or None, [(call id, tool name, arguments)]).
Reply = tuple[str | None, str | None, list[tuple[str, str, dict[str, Any]]]]


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def explode(x: str) -> str:
    """Always fails."""
    raise ValueError(f"boom: {x}")


def finish(answer: str) -> str:
    """Give the final answer."""
    return answer


def _usage(step: int) -> dict[str, Any]:
    return {
        "completion_tokens": 5 + step, "prompt_tokens": 20 + step, "total_tokens": 25 + 2 * step,
        "completion_tokens_details": {"accepted_prediction_tokens": 0, "audio_tokens": 0,
                                      "reasoning_tokens": 2, "rejected_prediction_tokens": 0},
        "prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": 4},
    }  # fmt: skip


def _completion(step: int, reply: Reply) -> Any:
    from openai.types.chat import ChatCompletion

    _, text, calls = reply
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return ChatCompletion.model_validate(
        {"id": f"chatcmpl-{step}", "object": "chat.completion", "created": 1_700_000_000 + step,
         "model": MODEL, "usage": _usage(step),
         "choices": [{"index": 0, "message": message,
                      "finish_reason": "tool_calls" if calls else "stop"}]}
    )  # fmt: skip


def _chunks(step: int, reply: Reply) -> list[Any]:
    """The reply as OpenAI streams it: the role, the text in pieces (or each call's name and
    arguments), the finish reason, then the usage alone (``include_usage``)."""
    from openai.types.chat import ChatCompletionChunk

    _, text, calls = reply
    base = {"id": f"chatcmpl-{step}", "object": "chat.completion.chunk",
            "created": 1_700_000_000 + step, "model": MODEL}  # fmt: skip

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> Any:
        choices = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return ChatCompletionChunk.model_validate({**base, "choices": choices, "usage": usage})

    out = [chunk({"role": "assistant", "content": ""})]
    if text:
        out += [chunk({"content": text[i : i + 4]}) for i in range(0, len(text), 4)]
    for index, (cid, name, args) in enumerate(calls):
        start = {"index": index, "id": cid, "type": "function",
                 "function": {"name": name, "arguments": ""}}  # fmt: skip
        out.append(chunk({"tool_calls": [start]}))
        raw = json.dumps(args)
        for i in range(0, len(raw), 6):
            piece = {"index": index, "function": {"arguments": raw[i : i + 6]}}
            out.append(chunk({"tool_calls": [piece]}))
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    out.append(chunk({}, usage=_usage(step)))
    return out


def scripted(replies: list[Reply], name: str = "scripted") -> Any:
    """A :class:`ScriptedChatGenerator` (its class made once Haystack is imported)."""
    return _generator_class()(replies, name)


_CLASS: list[Any] = []


def _generator_class() -> Any:
    if _CLASS:
        return _CLASS[0]
    from haystack import component
    from haystack.components.generators.chat.openai import (
        _convert_chat_completion_chunk_to_streaming_chunk,
        _convert_chat_completion_to_chat_message,
    )
    from haystack.components.generators.utils import _convert_streaming_chunks_to_chat_message
    from haystack.dataclasses import (
        ChatMessage,
        ComponentInfo,
        ReasoningContent,
        StreamingChunk,
    )

    @component
    class ScriptedChatGenerator:
        """Replies from a script, as ``OpenAIChatGenerator`` turns OpenAI's replies into
        ``ChatMessage``s (its own conversion functions)."""

        def __init__(self, replies: list[Reply], name: str = "scripted") -> None:
            self.replies = list(replies)
            self.step = 0
            self.name = name

        @component.output_types(replies=list[ChatMessage])
        def run(
            self,
            messages: list[ChatMessage],
            streaming_callback: Callable[[StreamingChunk], None] | None = None,
            tools: Any = None,
        ) -> dict[str, list[ChatMessage]]:
            reply = self.replies[self.step]
            self.step += 1
            reasoning = reply[0]
            if streaming_callback is None:
                message = _convert_chat_completion_to_chat_message(
                    _completion(self.step, reply), _completion(self.step, reply).choices[0]
                )
                if reasoning:
                    content = [ReasoningContent(reasoning_text=reasoning), *message._content]
                    message = ChatMessage(_role=message.role, _content=content, _meta=message.meta)
                return {"replies": [message]}
            info = ComponentInfo.from_component(self)
            chunks: list[StreamingChunk] = []
            for raw in _chunks(self.step, reply):
                chunk = _convert_chat_completion_chunk_to_streaming_chunk(raw, chunks, info)
                if reasoning and len(chunks) == 1:  # after the role chunk, before the text
                    think = StreamingChunk(
                        content="", index=0, start=True, component_info=info,
                        reasoning=ReasoningContent(reasoning_text=reasoning),
                        meta={"model": MODEL},
                    )  # fmt: skip
                    chunks.append(think)
                    streaming_callback(think)
                chunks.append(chunk)
                streaming_callback(chunk)
            return {"replies": [_convert_streaming_chunks_to_chat_message(chunks)]}

        @component.output_types(replies=list[ChatMessage])
        async def run_async(
            self,
            messages: list[ChatMessage],
            streaming_callback: Callable[[StreamingChunk], None] | None = None,
            tools: Any = None,
        ) -> dict[str, list[ChatMessage]]:
            """As :meth:`run`, each chunk awaited by an async callback (as the OpenAI
            generator's ``run_async`` does, through ``_invoke_streaming_callback``)."""
            from haystack.dataclasses.streaming_chunk import _invoke_streaming_callback

            if streaming_callback is None:
                return self.run(messages, tools=tools)
            chunks: list[StreamingChunk] = []
            replies = self.run(messages, streaming_callback=chunks.append, tools=tools)
            for chunk in chunks:
                await _invoke_streaming_callback(streaming_callback, chunk)
            return replies

    _CLASS.append(ScriptedChatGenerator)
    return ScriptedChatGenerator


def tools() -> list[Any]:
    from haystack.tools import Tool, create_tool_from_function

    made: list[Tool] = [create_tool_from_function(f) for f in (add, explode, finish)]
    return made


SOLO: list[Reply] = [
    ("need add", None, [("call_1", "add", {"a": 1, "b": 2})]),
    (None, None, [("call_2", "explode", {"x": "y"})]),
    (None, "1+2=3; explode failed.", []),
]


def solo_agent(**kwargs: Any) -> Any:
    from haystack.components.agents import Agent

    add_tool, explode_tool, _ = tools()
    return Agent(
        chat_generator=scripted(SOLO), tools=[add_tool, explode_tool],
        system_prompt="Be terse.", **kwargs,
    )  # fmt: skip


def helper_agent() -> Any:
    from haystack.components.agents import Agent

    replies: list[Reply] = [
        (None, None, [("call_h1", "add", {"a": 2, "b": 2})]),
        (None, "2+2=4", []),
    ]
    return Agent(chat_generator=scripted(replies, "helper"), tools=[tools()[0]])


def nested_agent(**kwargs: Any) -> Any:
    from haystack.components.agents import Agent
    from haystack.tools import ComponentTool

    helper = ComponentTool(
        component=helper_agent(), name="helper", description="Asks the helper agent."
    )
    ask = {"messages": [{"role": "user", "content": [{"text": "what is 2+2?"}]}]}
    replies: list[Reply] = [
        (None, None, [("call_n1", "helper", ask)]),
        (None, "The helper says 4.", []),
    ]
    return Agent(chat_generator=scripted(replies), tools=[helper], **kwargs)


def exit_agent() -> Any:
    from haystack.components.agents import Agent

    replies: list[Reply] = [
        (None, "Finishing.", [("call_f1", "finish", {"answer": "done"})]),
    ]
    return Agent(chat_generator=scripted(replies), tools=tools(), exit_conditions=["finish"])


AGENTS: dict[str, Callable[..., Any]] = {
    "solo": solo_agent, "nested": nested_agent, "exit": exit_agent,
}  # fmt: skip
PROMPTS = {"solo": PROMPT, "nested": "ask the helper what 2+2 is", "exit": "finish"}


def run(which: str = "solo", streaming_callback: Any = None) -> dict[str, Any]:
    """The run's result (``Agent.run``'s dict)."""
    from haystack.dataclasses import ChatMessage

    agent = AGENTS[which]()
    messages = [ChatMessage.from_user(PROMPTS[which])]
    result: dict[str, Any] = agent.run(messages=messages, streaming_callback=streaming_callback)
    return result


def long_run(steps: int, streaming_callback: Any = None) -> dict[str, Any]:
    """A run of ``steps`` calls of ``add``, one per step, then an answer (the benchmark's)."""
    from haystack.components.agents import Agent
    from haystack.dataclasses import ChatMessage

    replies: list[Reply] = [
        (f"step {i}", None, [(f"call_{i}", "add", {"a": i, "b": 1})]) for i in range(steps)
    ]
    replies.append((None, "done", []))
    agent = Agent(chat_generator=scripted(replies), tools=[tools()[0]], max_agent_steps=steps + 2)
    messages = [ChatMessage.from_user("count")]
    result: dict[str, Any] = agent.run(messages=messages, streaming_callback=streaming_callback)
    return result


def write_fixtures() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for which in ("solo", "nested"):
        messages = [m.to_dict() for m in run(which)["messages"]]
        path = FIXTURES / f"haystack-ai_v3.4.1_messages_{which}.json"
        path.write_text(json.dumps(messages, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_fixtures()
