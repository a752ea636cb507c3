"""Model APIs as the scripted server speaks them: one module per wire protocol.

Each module reads a request body into a :class:`Request` (the conversation the agent sent, with
every tool result and its error flag) and writes a :class:`~tests.agents.script.Reply` as the
agent's SDK expects it, its token counts (:class:`~tests.agents.script.SentUsage`) in the API's
own usage fields, and writes an API error (:data:`~tests.agents.script.Failure`) in the
provider's own status and error body. Only what the CLIs were seen to need is implemented;
anything else they ask for gets a small well-formed answer so that no retry loop starts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tests.agents.script import Failure, Reply, SentUsage


@dataclass
class SeenResult:
    """A tool result as the agent sent it back to the model. ``is_error`` is the wire's own
    error flag (Anthropic ``is_error``, a Gemini ``error`` response); None where the protocol
    has none (Responses, Chat Completions), so only the text can tell."""

    call_id: str
    text: str
    is_error: bool | None = None
    name: str | None = None


@dataclass
class Message:
    """One message of the conversation: user text, tool results, or a model turn's calls."""

    role: Literal["user", "assistant"]
    text: str = ""
    call_ids: list[str] = field(default_factory=list)
    results: list[SeenResult] = field(default_factory=list)


@dataclass
class Request:
    """A model request, normalized. ``tools`` maps tool name to its parameter schema."""

    messages: list[Message]
    tools: dict[str, dict[str, Any]]
    model: str | None = None
    stream: bool = True


@dataclass
class Response:
    """What the server writes: status, content type and the body, streamed as chunks."""

    status: int
    content_type: str
    chunks: Iterator[bytes]


class Wire(Protocol):
    """The interface each wire module provides (as module-level names): ``COUNTS``, the token
    counts its usage has fields for, and the functions."""

    COUNTS: frozenset[str]

    def is_model_request(self, path: str) -> bool: ...
    def parse(self, body: dict[str, Any], path: str) -> Request: ...
    def respond(self, reply: Reply, request: Request, path: str) -> Response: ...
    def side_reply(self, request: Request) -> Reply: ...
    def other(self, path: str) -> Response: ...
    def failure(self, kind: Failure) -> Response: ...


#: A string each API error's message holds, so that a check can tell the error an agent
#: recorded (nothing the agent writes by itself holds it).
FAILURE_TOKEN: dict[Failure, str] = {"retry": "TF-ERR-RETRY", "fatal": "TF-ERR-FATAL"}


def sent_usage(reply: Reply) -> SentUsage:
    """The counts the server numbered ``reply`` with: every answer carries its own."""
    if reply.usage is None:
        raise ValueError(f"a reply the server did not number: {reply!r}")
    return reply.usage


def json_response(obj: Any, status: int = 200) -> Response:
    """A plain JSON answer (model lists, token counts, 404s)."""
    return Response(status, "application/json", iter([json.dumps(obj).encode()]))


def sse(events: list[tuple[str | None, dict[str, Any]]]) -> Iterator[bytes]:
    """Server-sent events: ``event:`` lines where the protocol names its events."""
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {json.dumps(data)}\n\n".encode()


def block_text(content: Any) -> str:
    """The text of a string or of a list of ``{"type": "text", "text": ...}``-like parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else json.dumps(content)


def openai_failure(kind: Failure) -> Response:
    """OpenAI's errors (``{"error": {message, type, param, code}}``, Chat Completions and
    Responses alike): 500 ``server_error``, which the SDKs retry, and 400
    ``invalid_request_error``, which they do not."""
    status, kind_name, message = {
        "retry": (500, "server_error", "The server had an error while processing your request."),
        "fatal": (400, "invalid_request_error", "Invalid value for 'messages'."),
    }[kind]
    error = {"message": f"{message} ({FAILURE_TOKEN[kind]})", "type": kind_name}
    return json_response({"error": {**error, "param": None, "code": None}}, status)
