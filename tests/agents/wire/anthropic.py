"""Anthropic Messages API (``POST /v1/messages``, SSE), as Claude Code and Cline use it.

Its usage counts cached input apart from ``input_tokens`` and has no reasoning count (thinking
is part of ``output_tokens``). A stream states the input counts in ``message_start`` with an
output count of 1, as the API does, and the final counts (cumulative) in ``message_delta``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tests.agents.script import Failure, Reply, SentUsage
from tests.agents.wire import (
    FAILURE_TOKEN,
    Message,
    Request,
    Response,
    SeenResult,
    block_text,
    json_response,
    sent_usage,
    sse,
)

COUNTS = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"})


def is_model_request(path: str) -> bool:
    return "/v1/messages" in path and "count_tokens" not in path


def parse(body: dict[str, Any], path: str) -> Request:
    messages = []
    for raw in body.get("messages", []):
        content = raw.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        message = Message(role="assistant" if raw.get("role") == "assistant" else "user")
        texts = []
        for block in blocks or []:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "tool_use":
                message.call_ids.append(block.get("id", ""))
            elif kind == "tool_result":
                message.results.append(
                    SeenResult(
                        call_id=block.get("tool_use_id", ""),
                        text=block_text(block.get("content")),
                        is_error=bool(block.get("is_error", False)),
                    )
                )
        message.text = "\n".join(texts)
        messages.append(message)
    tools = {t["name"]: t.get("input_schema", {}) for t in body.get("tools", []) if "name" in t}
    return Request(messages, tools, body.get("model"), bool(body.get("stream")))


def side_reply(request: Request) -> Reply:
    """Titles, summaries and the other small requests Claude Code makes beside the session."""
    return Reply(text="ok")


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.thinking:
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": "c2ln"})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    blocks += [
        {"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.args} for c in reply.calls
    ]
    return blocks


def _empty(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "tool_use":
        return {**block, "input": {}}
    if block["type"] == "text":
        return {**block, "text": ""}
    return {**block, "thinking": "", "signature": ""}


def _delta(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "tool_use":
        return [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
    if block["type"] == "text":
        return [{"type": "text_delta", "text": block["text"]}]
    return [
        {"type": "thinking_delta", "thinking": block["thinking"]},
        {"type": "signature_delta", "signature": block["signature"]},
    ]


def _usage(sent: SentUsage, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": sent.uncached_input,
        "cache_creation_input_tokens": sent.cache_write_tokens,
        "cache_read_input_tokens": sent.cache_read_tokens,
        "output_tokens": output_tokens,
    }


def respond(reply: Reply, request: Request, path: str) -> Response:
    blocks = _blocks(reply)
    sent = sent_usage(reply)
    stop = "tool_use" if reply.calls else "end_turn"
    message: dict[str, Any] = {
        "id": f"msg_{time.time_ns()}",
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(sent, 1),
    }
    if not request.stream:
        done = {**message, "content": blocks, "stop_reason": stop}
        return json_response({**done, "usage": _usage(sent, sent.output_tokens)})
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    for i, block in enumerate(blocks):
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": _empty(block)},
            )
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
            for d in _delta(block)
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": _usage(sent, sent.output_tokens),
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return Response(200, "text/event-stream", sse(events))


def other(path: str) -> Response:
    """``count_tokens`` and anything else: a small answer, never an error that starts retries."""
    return json_response({"input_tokens": 10})


def failure(kind: Failure) -> Response:
    """The API's errors (``{"type": "error", "error": {type, message}, "request_id"}``): 529
    ``overloaded_error``, which the SDK and Claude Code retry, and 400 ``invalid_request_error``,
    which they do not."""
    status, kind_name, message = {
        "retry": (529, "overloaded_error", "Overloaded"),
        "fatal": (400, "invalid_request_error", "messages: the request is not valid"),
    }[kind]
    error = {"type": kind_name, "message": f"{message} ({FAILURE_TOKEN[kind]})"}
    body = {"type": "error", "error": error, "request_id": f"req_{time.time_ns()}"}
    return json_response(body, status)
