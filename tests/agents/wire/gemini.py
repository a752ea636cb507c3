"""Gemini API (``models/<m>:streamGenerateContent?alt=sse`` and ``:generateContent``), as Gemini
CLI uses it. A ``functionResponse`` whose response holds ``error`` is the wire's failure flag.

``usageMetadata``'s prompt count includes the cached tokens; its candidates count leaves out the
thoughts, counted apart (``totalTokenCount`` adds all three); no cache-write count.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.agents.script import Failure, Reply
from tests.agents.wire import (
    FAILURE_TOKEN,
    Message,
    Request,
    Response,
    SeenResult,
    json_response,
    sent_usage,
    sse,
)

COUNTS = frozenset({"input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"})

_PATH = re.compile(r"models/([^:/?]+):(\w+)")


def is_model_request(path: str) -> bool:
    match = _PATH.search(path)
    return match is not None and match.group(2) in ("generateContent", "streamGenerateContent")


def _result(part: dict[str, Any]) -> SeenResult:
    fr = part["functionResponse"]
    response = fr.get("response") or {}
    if isinstance(response, dict) and set(response) <= {"output", "error"}:
        text = "\n".join(str(response[k]) for k in ("output", "error") if k in response)
    else:
        text = json.dumps(response)
    is_error = isinstance(response, dict) and "error" in response
    return SeenResult(fr.get("id", ""), text, is_error=is_error, name=fr.get("name"))


def parse(body: dict[str, Any], path: str) -> Request:
    messages: list[Message] = []
    for content in body.get("contents", []):
        parts = [p for p in content.get("parts", []) if isinstance(p, dict)]
        if content.get("role") == "model":
            message = Message("assistant")
            message.call_ids = [
                p["functionCall"].get("id", "") for p in parts if "functionCall" in p
            ]
            message.text = "".join(p.get("text", "") for p in parts if not p.get("thought"))
        else:
            message = Message("user", "\n".join(p["text"] for p in parts if "text" in p))
            message.results = [_result(p) for p in parts if "functionResponse" in p]
        messages.append(message)
    tools = {
        f["name"]: f.get("parametersJsonSchema") or f.get("parameters") or {}
        for t in body.get("tools", [])
        for f in t.get("functionDeclarations", [])
    }
    match = _PATH.search(path)
    model = match.group(1) if match else None
    return Request(messages, tools, model, bool(match and match.group(2).startswith("stream")))


def side_reply(request: Request) -> Reply:
    """Routing, next-speaker and loop checks ask for JSON; one object answers all of them."""
    return Reply(text='{"reasoning": "simple", "model_choice": "flash", "next_speaker": "user"}')


def respond(reply: Reply, request: Request, path: str) -> Response:
    parts: list[dict[str, Any]] = []
    if reply.thinking:
        parts.append({"text": reply.thinking, "thought": True})
    if reply.text:
        parts.append({"text": reply.text})
    parts += [
        {"functionCall": {"id": c.call_id, "name": c.name, "args": c.args}} for c in reply.calls
    ]
    sent = sent_usage(reply)
    body = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": sent.input_tokens,
            "cachedContentTokenCount": sent.cache_read_tokens,
            "candidatesTokenCount": sent.visible_output,
            "thoughtsTokenCount": sent.reasoning_tokens,
            "totalTokenCount": sent.input_tokens + sent.output_tokens,
        },
        "modelVersion": request.model,
        "responseId": f"r{time.time_ns()}",
    }
    if not request.stream:
        return json_response(body)
    return Response(200, "text/event-stream", sse([(None, body)]))


def other(path: str) -> Response:
    """``countTokens``, model lists; anything else is a 404 (Gemini CLI does not retry those)."""
    if ":countTokens" in path:
        return json_response({"totalTokens": 10})
    if "models" in path:
        return json_response({"models": [{"name": "models/fake-model"}]})
    return json_response({}, 404)


def failure(kind: Failure) -> Response:
    """Google's RPC errors (``{"error": {code, message, status}}``): 503 ``UNAVAILABLE`` (the
    model is overloaded), which Gemini CLI retries, and 400 ``INVALID_ARGUMENT``, which it does
    not."""
    status, name, message = {
        "retry": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        "fatal": (400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
    }[kind]
    error = {"code": status, "message": f"{message} ({FAILURE_TOKEN[kind]})", "status": name}
    return json_response({"error": error}, status)
