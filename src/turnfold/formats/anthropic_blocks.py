"""Anthropic Messages content blocks as transcript entries (spec L-1, L-2.2, L-2.6).

Claude Code writes ``message.content`` as Anthropic blocks, so the ``claude-code`` and
``anthropic`` loaders share this conversion. Blocks map like this:

=============================  ===========================================================
block                          entry
=============================  ===========================================================
``text``                       :class:`AssistantText` (citations dropped, the text kept)
``thinking``                   :class:`Thinking` ``form="text"``; an empty ``thinking`` with
                               only a ``signature`` is ``form="encrypted"`` (the signature
                               in ``data``); empty without a signature: nothing
``redacted_thinking``          :class:`Thinking` ``form="redacted"``, ``data`` verbatim
``tool_use``, ``server_tool_   :class:`ToolCall`; ``call_id`` is the block's ``id``
use``, ``mcp_tool_use``
``tool_result``,               the outcome of the call with that ``tool_use_id``:
``mcp_tool_result``            ``is_error: true`` → ``error``, otherwise ``success``
``*_tool_result`` (server)     ``web_search_tool_result`` and friends: an error object
                               (``*_error``, ``error_code``) → ``error``; a code execution
                               with a non-zero ``return_code`` → ``error``; else ``success``
``image`` in a result          :class:`ImageData` (base64 sources only)
``tool_reference`` in a        a line naming the tool it references (a tool search's
result                         result is made of them)
``search_result``, ``web_      a line naming it: its title and URL (:func:`search_line`)
search_result`` in a result
``document``, ``file``,        an attachment line (name, media type, size): the user
``container_upload``           attached it (:func:`attachment_line`)
=============================  ===========================================================

Everything here is a pure function of one block; pairing calls with results is the loaders' job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnfold.formats.common import (
    MAPPINGS,
    NameSet,
    as_int,
    describe_args,
    parse_arguments,
    result_kind,
    stringify,
    text_and_images,
    text_result,
    usage_from,
)
from turnfold.model import ImageData, Thinking, ToolCall, ToolResult, ToolStatus, Usage

#: Blocks that start a tool call.
CALL_TYPES = NameSet({"tool_use", "server_tool_use", "mcp_tool_use"})
#: Client-side result blocks (the user turn of an agent loop, or an MCP connector result).
CLIENT_RESULT_TYPES = NameSet({"tool_result", "mcp_tool_result"})
#: Blocks whose type only the Anthropic API uses: enough to tell its message lists apart.
SPECIFIC_TYPES = NameSet(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
     "mcp_tool_use", "mcp_tool_result", "document", "search_result", "container_upload"}
)  # fmt: skip


# The sets above as plain frozensets, for the tests a load makes of every block: once a value is
# known to be a string, the NameSet's own test (a Python call) is not needed.
_CALLS, _CLIENT_RESULTS = frozenset(CALL_TYPES), frozenset(CLIENT_RESULT_TYPES)


def is_result_block(block: Mapping[str, Any]) -> bool:
    """Whether ``block`` reports the outcome of a call (client, MCP or server tool)."""
    return is_result_type(block.get("type"))


def is_result_type(kind: Any) -> bool:
    """Whether a block of type ``kind`` reports the outcome of a call (:func:`is_result_block`)."""
    return isinstance(kind, str) and (kind in _CLIENT_RESULTS or kind.endswith("_tool_result"))


def is_call_type(kind: Any) -> bool:
    """Whether a block of type ``kind`` starts a tool call (``kind in CALL_TYPES``)."""
    return isinstance(kind, str) and kind in _CALLS


def is_specific_block(block: Any) -> bool:
    """Whether ``block`` is typed the way only the Anthropic API types blocks."""
    if not isinstance(block, MAPPINGS):
        return False
    kind = block.get("type")
    if kind in SPECIFIC_TYPES:
        return True
    # OpenAI images are ``image_url`` / ``input_image``; an ``image`` with a ``source`` is ours.
    return (kind == "image" and "source" in block) or (
        isinstance(kind, str) and kind.endswith("_tool_result")
    )


def usage_of(raw: Any) -> Usage | None:
    """The ``usage`` object of a response as :class:`Usage`; None when nothing is recorded."""
    return with_one_hour_writes(
        usage_from(
            raw,
            cache_apart=True,
            input_tokens="input_tokens",
            output_tokens="output_tokens",
            cache_read_tokens="cache_read_input_tokens",
            cache_write_tokens="cache_creation_input_tokens",
        ),
        raw,
    )


def with_one_hour_writes(usage: Usage | None, raw: Any) -> Usage | None:
    """``usage`` with the part of its cache writes kept for an hour, which costs more than a
    five-minute write (``cache_creation.ephemeral_1h_input_tokens``, Claude Code 2.x and the
    API since the one-hour cache). None of them leaves it unset: the writes are then priced as
    the five-minute ones they are, and a usage reads as it did before the part was counted.

    >>> with_one_hour_writes(Usage(cache_write_tokens=9),
    ...     {"cache_creation": {"ephemeral_1h_input_tokens": 4}}).cache_write_1h_tokens
    4
    """
    if usage is None or not isinstance(raw, MAPPINGS):
        return usage
    creation = raw.get("cache_creation")
    if isinstance(creation, MAPPINGS):
        hour = as_int(creation.get("ephemeral_1h_input_tokens"))
        if hour is not None and hour > 0:
            usage.cache_write_1h_tokens = hour
    return usage


def thinking_of(block: Mapping[str, Any]) -> Thinking | None:
    """A ``thinking`` or ``redacted_thinking`` block; None when it carries nothing at all.

    Reasoning is never shown as an empty box (spec P-9): an empty ``thinking`` whose signature
    is all that is left (``display: omitted``) is encrypted reasoning, not empty text.
    """
    if block.get("type") == "redacted_thinking":
        data = block.get("data")
        return Thinking(form="redacted", data=data if isinstance(data, str) else None)
    text = block.get("thinking")
    if isinstance(text, str) and text.strip():
        return Thinking(text=text)
    signature = block.get("signature")
    if isinstance(signature, str) and signature:
        return Thinking(form="encrypted", data=signature)
    return None


def call_of(
    block: Mapping[str, Any], *, cwd: str | None, batch_id: str | None, status: ToolStatus
) -> ToolCall:
    """A ``tool_use`` / ``server_tool_use`` / ``mcp_tool_use`` block as a :class:`ToolCall`."""
    call_id = block.get("id")
    name = block.get("name")
    name = name if isinstance(name, str) else ""
    args = parse_arguments(block.get("input"))
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) else "",
        name=name,
        args=args,
        description=describe_args(name, args, cwd),
        status=status,
        batch_id=batch_id,
    )


#: Blocks that carry a file the user attached; shown as an attachment line.
ATTACHMENT_TYPES = NameSet({"document", "file", "container_upload"})


def image_of(block: Mapping[str, Any]) -> ImageData | None:
    """An ``image`` block with base64 data as :class:`ImageData`; None for other sources."""
    return _image(block)


def attachment_line(block: Mapping[str, Any]) -> str:
    """A file block (``document``, ``file``, an image by URL) as one line: name, media type,
    size. Its content is not shown, but that it was attached is (spec X-2).

    >>> attachment_line({"type": "document", "title": "spec.pdf",
    ...                  "source": {"type": "base64", "media_type": "application/pdf",
    ...                             "data": "QUJD"}})
    '[attachment: spec.pdf · application/pdf · 3 B]'
    >>> attachment_line({"type": "file", "file": {"file_id": "file_01"}})
    '[attachment: file_01]'
    """
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    inner = block.get("file")
    inner = inner if isinstance(inner, Mapping) else {}
    name = next(
        (
            value
            for value in (
                block.get("title"), block.get("name"), block.get("filename"),
                inner.get("filename"), inner.get("name"), source.get("url"),
                source.get("file_id"), inner.get("file_id"), block.get("file_id"),
            )
            if isinstance(value, str) and value
        ),
        str(block.get("type") or "file"),
    )  # fmt: skip
    media_type = next(
        (
            value
            for value in (source.get("media_type"), block.get("media_type"),
                          inner.get("media_type"), inner.get("mime_type"))
            if isinstance(value, str) and value
        ),
        None,
    )  # fmt: skip
    size = _size(block.get("size"), inner.get("size"), source.get("data"))
    parts = [p for p in (name, media_type, size) if p]
    return f"[attachment: {' · '.join(parts)}]"


def _size(*candidates: Any) -> str | None:
    """A recorded byte size, or the size of base64 data, in readable units."""
    count: float | None = None
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            count = value
            break
        if isinstance(value, str) and value:
            count = len(value.rstrip("=")) * 3 // 4  # decoded bytes of base64 data
            break
    if count is None:
        return None
    for unit in ("B", "KB", "MB"):
        if count < 1024 or unit == "MB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return None


def _image(block: Mapping[str, Any]) -> ImageData | None:
    source = block.get("source")
    if not isinstance(source, MAPPINGS) or source.get("type") != "base64":
        return None
    data, media_type = source.get("data"), source.get("media_type")
    if not isinstance(data, str):
        return None
    return ImageData(media_type=media_type if isinstance(media_type, str) else "image", data=data)


def _document_text(block: Mapping[str, Any]) -> str:
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "text":
        data = source.get("data")
        if isinstance(data, str):
            return data
    title = block.get("title")
    label = title if isinstance(title, str) and title else "document"
    return f"[{label}]"


def content_of(content: Any) -> tuple[str | None, list[ImageData]]:
    """The text and inline images of a result's ``content`` (a string or a list of blocks)."""
    return text_and_images(content, _content_part)


def _content_part(block: Mapping[str, Any]) -> str | ImageData | None:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        text: str = block["text"]
        return text
    if kind == "image":
        return _image(block)
    if kind == "document":
        return _document_text(block)
    if kind == "tool_reference":  # a tool search found this tool
        name = block.get("tool_name") or block.get("name")
        return f"Tool: {name}" if isinstance(name, str) and name else "Tool: ?"
    if kind in ("file", "container_upload"):
        return attachment_line(block)
    if kind in ("search_result", "web_search_result"):
        return search_line(block)
    return None


def search_line(block: Mapping[str, Any]) -> str:
    """A search result (``search_result``, ``web_search_result``) as one line: its title
    and where it is (``url``, else ``source``), what a reader needs to tell results apart."""
    title, url = block.get("title"), block.get("url") or block.get("source")
    parts = [p for p in (title, url) if isinstance(p, str) and p]
    return " — ".join(parts) or "[search result]"


def result_of(block: Mapping[str, Any]) -> tuple[ToolStatus, ToolResult]:
    """The status and result a result block reports for its call."""
    kind = block.get("type")
    if isinstance(kind, str) and kind in _CLIENT_RESULTS:
        content = block.get("content")
        status: ToolStatus = "error" if block.get("is_error") is True else "success"
        if isinstance(content, str):  # the common shape, with no parts to walk
            return status, ToolResult(text=content, kind=result_kind(content))
        text, images = content_of(content)
        return status, text_result(text, images=images)
    return _server_result(block.get("content"))


def _server_result(content: Any) -> tuple[ToolStatus, ToolResult]:
    """``web_search_tool_result``, ``web_fetch_tool_result``, ``code_execution_tool_result``…"""
    if isinstance(content, list):
        text, images = content_of(content)
        return "success", text_result(text, images=images)
    if not isinstance(content, MAPPINGS):
        text, images = content_of(content)
        return "success", text_result(text, images=images)
    kind = content.get("type")
    if (isinstance(kind, str) and kind.endswith("_error")) or "error_code" in content:
        # The code names the failure; the text editor's and tool search's add a message.
        said = [p for p in (content.get("error_code"), content.get("error_message")) if p]
        text = ": ".join(said) if all(isinstance(p, str) for p in said) else ""
        return "error", text_result(text or stringify(content))
    if "return_code" in content:  # code execution: the exit code says whether it worked
        output = "\n".join(
            part for part in (content.get("stdout"), content.get("stderr"))
            if isinstance(part, str) and part
        )  # fmt: skip
        failed = content.get("return_code") not in (0, None)
        return ("error" if failed else "success"), text_result(output or None, structured=content)
    if kind == "web_fetch_result":
        text, images = content_of([content.get("content")])
        url = content.get("url")
        heading = url if isinstance(url, str) else None
        body = "\n".join(p for p in (heading, text) if p)
        return "success", text_result(body or None, images=images)
    return "success", text_result(stringify(content))
