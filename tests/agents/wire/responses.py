"""OpenAI Responses API (``POST /v1/responses``, SSE), as Codex uses it.

Responses input is a flat list of items; consecutive model items (reasoning, calls, assistant
messages) are one model turn, and a ``function_call_output`` carries a result with no error flag.
Usage comes once, in ``response.completed``: input includes the cached tokens, output the
reasoning ones; no cache-write count.
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

_MODEL_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call"}
_OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}


def is_model_request(path: str) -> bool:
    return path.split("?")[0].endswith("/responses")


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and "content" in output:
        return block_text(output["content"])
    return block_text(output)


def parse(body: dict[str, Any], path: str) -> Request:
    messages: list[Message] = []
    for item in body.get("input", []):
        kind, role = item.get("type", "message"), item.get("role")
        if kind in _MODEL_ITEMS or (kind == "message" and role == "assistant"):
            if not messages or messages[-1].role != "assistant":
                messages.append(Message(role="assistant"))
            if "call_id" in item:
                messages[-1].call_ids.append(item["call_id"])
            if kind == "message":
                messages[-1].text += block_text(item.get("content"))
        elif kind in _OUTPUT_ITEMS:
            result = SeenResult(call_id=item.get("call_id", ""), text=_output_text(item["output"]))
            messages.append(Message(role="user", results=[result]))
        elif kind == "message" and role == "user":
            messages.append(Message(role="user", text=block_text(item.get("content"))))
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools", []):
        if tool.get("type") == "namespace":
            for inner in tool.get("tools", []):
                tools[inner.get("name", "")] = {**inner.get("parameters", {}), "_ns": tool["name"]}
        elif "name" in tool:
            tools[tool["name"]] = tool.get("parameters", {})
    return Request(messages, tools, body.get("model"), bool(body.get("stream", True)))


def side_reply(request: Request) -> Reply:
    return Reply(text="ok")


def _items(reply: Reply, request: Request) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.thinking:
        summary = [{"type": "summary_text", "text": reply.thinking}]
        items.append({"type": "reasoning", "id": f"rs_{time.time_ns()}", "summary": summary})
    if reply.text:
        content = [{"type": "output_text", "text": reply.text, "annotations": []}]
        items.append(
            {
                "type": "message",
                "id": f"msg_{time.time_ns()}",
                "role": "assistant",
                "status": "completed",
                "content": content,
            }
        )
    for call in reply.calls:
        item = {
            "type": "function_call",
            "id": f"fc_{call.call_id}",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": json.dumps(call.args),
            "status": "completed",
        }
        namespace = request.tools.get(call.name, {}).get("_ns")
        if namespace:
            item["namespace"] = namespace
        items.append(item)
    return items


def respond(reply: Reply, request: Request, path: str) -> Response:
    rid = f"resp_{time.time_ns()}"
    items = _items(reply, request)
    events: list[tuple[str | None, dict[str, Any]]] = [
        (
            "response.created",
            {
                "type": "response.created",
                "response": {"id": rid, "object": "response", "status": "in_progress"},
            },
        )
    ]
    for k, item in enumerate(items):
        added = {"type": "response.output_item.added", "output_index": k}
        events.append(
            ("response.output_item.added", {**added, "item": {**item, "status": "in_progress"}})
        )
        if item["type"] == "message":
            delta = {
                "type": "response.output_text.delta",
                "output_index": k,
                "item_id": item["id"],
                "content_index": 0,
                "delta": item["content"][0]["text"],
            }
            events.append(("response.output_text.delta", delta))
        done = {"type": "response.output_item.done", "output_index": k, "item": item}
        events.append(("response.output_item.done", done))
    sent = sent_usage(reply)
    usage = {
        "input_tokens": sent.input_tokens,
        "input_tokens_details": {"cached_tokens": sent.cache_read_tokens},
        "output_tokens": sent.output_tokens,
        "output_tokens_details": {"reasoning_tokens": sent.reasoning_tokens},
        "total_tokens": sent.input_tokens + sent.output_tokens,
    }
    completed = {"id": rid, "object": "response", "status": "completed", "output": items}
    events.append(
        (
            "response.completed",
            {"type": "response.completed", "response": {**completed, "usage": usage}},
        )
    )
    return Response(200, "text/event-stream", sse(events))


def other(path: str) -> Response:
    """``GET /models`` and the like: an empty list."""
    if "/models" in path:
        return json_response({"object": "list", "data": [], "models": []})
    return json_response({}, 404)


def failure(kind: Failure) -> Response:
    """OpenAI's errors, as the Responses API sends them
    (:func:`~tests.agents.wire.openai_failure`)."""
    return openai_failure(kind)
