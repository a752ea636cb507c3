"""MCP tool results: the Model Context Protocol's ``CallToolResult``, as every reader shows it.

A server answers ``tools/call`` with ``content`` (a list of content blocks), optional
``structuredContent`` (any JSON) and ``isError`` (schema 2025-06-18, ``mcp.types``). Agents
record it as the server sent it: OpenHands' ``mcp`` observation, Codex's
``mcp_tool_call_end`` event and ``McpToolCall`` item. The blocks (:func:`block`):

=================  ===========================================================================
``text``           its text
``image``          an image (:class:`ImageData`)
``audio``          a line naming it (media type, size): it is not played
``resource_link``  a line naming it (its URI, media type, size): a link is never followed
``resource``       an embedded resource: its text, or a line naming its ``blob``
=================  ===========================================================================

A block of any other type is shown as its JSON, so nothing is lost; :func:`warn_unknown`
warns of such types through the reader's warn-once (spec X-2), and the record that holds one
is accounted as warned about when it gave the warning. ``structuredContent`` stays
structured data; ``isError`` is the reader's to read (it is the call's status, not its result).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from turnfold.formats.anthropic_blocks import attachment_line
from turnfold.formats.common import stringify, text_and_images, text_result
from turnfold.model import ImageData, ToolResult

#: The content block types MCP defines (``ContentBlock``).
BLOCK_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


def block(value: Mapping[str, Any]) -> str | ImageData:
    """One content block as text, an image, or a line naming what is not shown.

    >>> block({"type": "resource_link", "uri": "file:///docs/a.md", "mimeType": "text/markdown"})
    '[attachment: file:///docs/a.md · text/markdown]'
    >>> block({"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}})
    'hello'
    """
    kind = value.get("type")
    mime = value.get("mimeType")
    if kind == "text" and isinstance(value.get("text"), str):
        text: str = value["text"]
        return text
    if kind == "image" and isinstance(value.get("data"), str):
        return ImageData(media_type=mime if isinstance(mime, str) else "image", data=value["data"])
    if kind == "resource":
        resource = value.get("resource")
        resource = resource if isinstance(resource, Mapping) else {}
        if isinstance(resource.get("text"), str):
            embedded: str = resource["text"]
            return embedded
        return _named(resource.get("uri"), resource.get("mimeType"), resource.get("blob"))
    if kind == "resource_link":
        return _named(value.get("uri") or value.get("name"), mime, None, value.get("size"))
    if kind == "audio":
        return _named("audio", mime, value.get("data"))
    return stringify(value)


def content(blocks: Any) -> tuple[str | None, list[ImageData]]:
    """A result's ``content`` as text (the blocks' texts, one per line) and images; a string
    (what an agent wrote instead, say an error) as it is."""
    return text_and_images(blocks, block)


def unknown_types(blocks: Any) -> list[str]:
    """The types of ``blocks`` that MCP does not define, each once, in the order met.

    >>> unknown_types([{"type": "text", "text": "a"}, {"type": "video"}, {"type": "video"}])
    ['video']
    """
    if not isinstance(blocks, list):
        return []
    found: list[str] = []
    for value in blocks:
        kind = str(value.get("type")) if isinstance(value, Mapping) else None
        if kind is not None and kind not in BLOCK_TYPES and kind not in found:
            found.append(kind)
    return found


def warn_unknown(blocks: Any, warn_once: Callable[[str], object]) -> None:
    """Warn of each type of ``blocks`` MCP does not define (shown as its JSON), through the
    reader's ``warn_once``: one reason per type, so a type is said once per load.

    >>> warn_unknown([{"type": "video"}, {"type": "text", "text": "a"}], print)
    unknown MCP content block type 'video' shown as JSON
    """
    for kind in unknown_types(blocks):
        warn_once(f"unknown MCP content block type {kind!r} shown as JSON")


def call_result(result: Mapping[str, Any], error: str | None = None) -> ToolResult | None:
    """A ``CallToolResult`` as a tool result: its blocks' text and images after ``error`` (what
    an agent wrote of a call that failed before the server answered), ``structuredContent`` as
    structured data. None when it holds none of them (not even an empty text).

    >>> call_result({"content": [{"type": "text", "text": "3 open"}],
    ...              "structuredContent": {"open": 3}}).structured
    {'open': 3}
    >>> call_result({"content": []}) is None
    True
    """
    text, images = content(result.get("content"))
    if error:
        text = f"{error}\n{text}" if text else error
    structured = result.get("structuredContent")
    if text is None and not images and structured is None:
        return None
    return text_result(text, images=images, structured=structured)


def _named(name: Any, mime: Any, data: Any, size: Any = None) -> str:
    """What a block holds that is not shown, as the line other readers name attachments by."""
    return attachment_line(
        {
            "name": name if isinstance(name, str) and name else None,
            "media_type": mime if isinstance(mime, str) else None,
            "size": size,
            "source": {"data": data},
        }
    )
