"""OpenAI Chat Completions (``POST /v1/chat/completions``, streamed chunks), as Qwen Code uses it.

A ``role: "tool"`` message is a result; the protocol has no error flag, so only its text tells.
Usage comes in a last chunk with no choices (``stream_options.include_usage``): prompt tokens
include the cached ones, completion tokens the reasoning ones; no cache-write count.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tests.agents.script import Failure, Reply
from tests.agents.wire import (
    Message,
    Request,
    Response,
    SeenResult,
    block_text,
    json_response,
    openai_failure,
    sent_usage,
    sse,
)

COUNTS = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"})


def is_model_request(path: str) -> bool:
    return "chat/completions" in path


def parse(body: dict[str, Any], path: str) -> Request:
    messages: list[Message] = []
    for raw in body.get("messages", []):
        role = raw.get("role")
        if role == "assistant":
            calls = [c.get("id", "") for c in raw.get("tool_calls") or []]
            messages.append(Message("assistant", block_text(raw.get("content")), call_ids=calls))
        elif role == "tool":
            result = SeenResult(raw.get("tool_call_id", ""), block_text(raw.get("content")))
            messages.append(Message("user", results=[result]))
        elif role == "user":
            messages.append(Message("user", block_text(raw.get("content"))))
    tools = {
        t["function"]["name"]: t["function"].get("parameters", {})
        for t in body.get("tools", [])
        if "function" in t
    }
    return Request(messages, tools, body.get("model"), bool(body.get("stream")))


def side_reply(request: Request) -> Reply:
    return Reply(text="ok")


def respond(reply: Reply, request: Request, path: str) -> Response:
    base = {"id": f"chatcmpl-{time.time_ns()}", "created": int(time.time()), "model": request.model}
    sent = sent_usage(reply)
    usage = {
        "prompt_tokens": sent.input_tokens,
        "completion_tokens": sent.output_tokens,
        "total_tokens": sent.input_tokens + sent.output_tokens,
        "prompt_tokens_details": {"cached_tokens": sent.cache_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": sent.reasoning_tokens},
    }
    calls = [
        {
            "index": i,
            "id": c.call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.args)},
        }
        for i, c in enumerate(reply.calls)
    ]
    finish = "tool_calls" if calls else "stop"
    if not request.stream:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return json_response(
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        )

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return {**base, "object": "chat.completion.chunk", "choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reply.thinking:
        chunks.append(chunk({"reasoning_content": reply.thinking}))
    if reply.text:
        chunks.append(chunk({"content": reply.text}))
    if calls:
        chunks.append(chunk({"tool_calls": calls}))
    chunks.append(chunk({}, finish))
    chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    body = sse([(None, c) for c in chunks])
    return Response(200, "text/event-stream", _then_done(body))


def _then_done(chunks: Any) -> Any:
    yield from chunks
    yield b"data: [DONE]\n\n"


def other(path: str) -> Response:
    """``GET /models``: the one fake model."""
    return json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})


def failure(kind: Failure) -> Response:
    """OpenAI's errors, as the Chat Completions API sends them
    (:func:`~tests.agents.wire.openai_failure`)."""
    return openai_failure(kind)
