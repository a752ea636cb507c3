"""LangChain message content as transcript pieces: the one rule every reader that meets
LangChain messages follows (the LangChain / LangGraph reader and its stream follower, the
LangGraph checkpointer reader through it, and the MLflow reader's LangChain autolog shapes).

A message's ``content`` is a string or a list of blocks: the provider's own (Anthropic's
``thinking`` / ``tool_use`` / ``server_tool_use``…, OpenAI Responses' ``reasoning`` with a
``summary``), LangChain's v0 data blocks (``source_type``), or the standard blocks of
langchain-core 1.x (``langchain_core.messages.content``; what ``AIMessage.content_blocks``
returns and what a model with ``output_version="v1"`` / ``LC_OUTPUT_VERSION=v1`` stores in
``content``, ``response_metadata["output_version"] == "v1"``). An AI message reads so
(:func:`ai_content`):

=================================  ============================================================
block                              read as
=================================  ============================================================
``reasoning``                      :class:`Thinking`: the standard ``reasoning`` text; OpenAI's
                                   ``summary`` (``form="summary"``) or ``encrypted_content``.
                                   Consecutive blocks of one ``id`` (the parts of one OpenAI
                                   summary, as ``block_translators.openai`` splits it) are one
``thinking``, ``redacted_        :class:`Thinking` as the Anthropic reader reads them
thinking``
``text`` (``output_text``…)        the text; its ``annotations`` (citations) are not shown: the
                                   transcript has no place for them, the text is kept
``refusal``                        a text of its own (``refusals``), as OpenAI's refusal
``tool_call``, ``tool_call_        the calls of ``tool_calls``: a block whose ``id`` is there is
chunk``, ``tool_use``,             the same call, read once; one that is not there is a call of
``function_call``                  its own (``calls``)
``invalid_tool_call``              as ``invalid_tool_calls`` (a garbled call, never run), once
``server_tool_call`` (``_chunk``), a provider's own tool call (``leading``, in order with the
``server_tool_use``,               thinking), settled by its result block (``results``:
``mcp_tool_use``                   ``server_tool_result``, Anthropic's ``*_tool_result``)
``image`` (``image_url``…)         inline data an :class:`ImageData`; a URL or a stored file
                                   named on a line (never fetched, X-1)
``file``, ``audio``, ``video``,    a line naming it (name, where it is kept, media type)
``text-plain``, ``document``
``non_standard``                   its ``value`` read as a block of its own
anything else                      a line naming its type, with a warning (``unshown``)
=================================  ============================================================

A human or system message's content is its text, inline images and a count of what else it
holds (:func:`prompt`); a tool's, its result's text and images (:func:`tool_content`).
An AI message's model is its ``response_metadata``'s (:func:`model_of`).
Everything here is pure; pairing calls with results and placing entries is the readers' job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turnfold.formats import anthropic_blocks
from turnfold.formats.common import MAPPINGS, NameSet, parse_arguments, text_result
from turnfold.formats.openai_responses import data_url_image, output_content, part_image_url
from turnfold.model import ImageData, Thinking, ToolResult, ToolStatus

#: Blocks that are a call of the message's ``tool_calls`` (LangChain's standard, Anthropic's,
#: OpenAI Responses'), by their ``id``; ``input_json_delta`` is a streamed fragment of one.
CALL_BLOCKS = NameSet({"tool_call", "tool_call_chunk", "tool_use", "function_call"})
#: A provider's own (server-side) tool calls, which LangChain keeps in the content only, never
#: in ``tool_calls``: Anthropic's ``server_tool_use`` / ``mcp_tool_use`` (langchain-anthropic
#: puts only ``tool_use`` blocks there) and LangChain's standard ``server_tool_call`` (and its
#: streamed ``server_tool_call_chunk``), ``langchain_core.messages.content.ServerToolCall``.
SERVER_CALLS = NameSet(
    {"server_tool_use", "mcp_tool_use", "server_tool_call", "server_tool_call_chunk"}
)
IMAGE_BLOCKS = NameSet({"image", "image_url", "input_image"})
FILE_BLOCKS = NameSet({"file", "input_file", "audio", "input_audio", "video", "document"})
#: LangChain's standard data blocks other than images (``content.FileContentBlock``,
#: ``AudioContentBlock``, ``VideoContentBlock``, ``PlainTextContentBlock``): named on a line
#: rather than showing their base64 data as text.
DATA_BLOCKS = NameSet({"file", "audio", "video", "text-plain"})
TEXT_BLOCKS = NameSet({"text", "output_text", "input_text"})
_STATUS: dict[str, ToolStatus] = {"error": "error", "success": "success"}
# The sets above as plain frozensets, for the test a load makes of every block (a NameSet's own
# test is a Python call), as anthropic_blocks keeps its own.
_TEXTS, _CALLS, _SERVER = frozenset(TEXT_BLOCKS), frozenset(CALL_BLOCKS), frozenset(SERVER_CALLS)
_MEDIA = frozenset(IMAGE_BLOCKS | DATA_BLOCKS | FILE_BLOCKS)


@dataclass(slots=True)
class AiContent:
    """What an AI message holds, read (:func:`ai_content`); its entries are the reader's to
    make and place: ``leading`` first (in the content's order), then the text, the refusals,
    the calls, the garbled calls. Nothing here is the message's own to change: the calls of
    ``tool_calls`` are the message's items, read in place."""

    #: The message's thinking (``additional_kwargs`` first, then its blocks) and its provider's
    #: own tool calls (their blocks, to be made calls of the message's batch), in order.
    leading: Sequence[Thinking | Mapping[str, Any]] = ()
    text: str = ""
    refusals: Sequence[str] = ()
    images: Sequence[ImageData] = ()
    #: ``tool_calls`` and then the call blocks it lacks, each as ``{name, args, id}``.
    calls: Sequence[Any] = ()
    #: ``invalid_tool_calls`` and then the ``invalid_tool_call`` blocks it lacks.
    invalid: Sequence[Any] = ()
    #: Result blocks of server calls (this message's or an earlier one's).
    results: Sequence[Mapping[str, Any]] = ()
    #: Why a block is named rather than shown, or skipped: for the reader to warn.
    unshown: Sequence[str] = ()


def _kind(block: Mapping[str, Any]) -> str | None:
    """A block's ``type``; None when it has none a block can have (a list, say): unknown."""
    kind = block.get("type")
    return kind if type(kind) is str else None


def ai_content(data: Mapping[str, Any]) -> AiContent:
    """An AI message's fields (``messages_to_dict``'s ``data``) read by the table above.

    >>> read = ai_content({"content": [
    ...     {"type": "reasoning", "reasoning": "Add."},
    ...     {"type": "text", "text": "On it.", "annotations": [{"type": "citation"}]},
    ...     {"type": "tool_call", "id": "c1", "name": "add", "args": {"a": 1}}],
    ...     "tool_calls": [{"name": "add", "args": {"a": 1}, "id": "c1"}]})
    >>> [t.text for t in read.leading], read.text, [c["id"] for c in read.calls]
    (['Add.'], 'On it.', ['c1'])
    """
    leading: list[Thinking | Mapping[str, Any]] = []
    extra = data.get("additional_kwargs")
    if extra and type(extra) is dict:
        said = extra.get("reasoning_content")  # DeepSeek, Qwen… through langchain
        if type(said) is str and said.strip():
            leading.append(Thinking(text=said))
        # The OpenAI Responses reasoning item, where langchain-openai's v0 output and
        # LangChain.js keep it (its summary, or only its encrypted content).
        item = extra.get("reasoning")
        thought = reasoning(item) if isinstance(item, Mapping) else None
        if thought is not None:
            leading.append(thought)
    calls = data.get("tool_calls")
    invalid = data.get("invalid_tool_calls")
    read = AiContent(
        leading,
        calls=calls if type(calls) is list else (),
        invalid=invalid if type(invalid) is list else (),
    )
    content = data.get("content")
    if type(content) is str:
        read.text = content
    elif type(content) is list:
        _read_blocks(content, read, leading)
    return read


def model_of(data: Mapping[str, Any]) -> str | None:
    """The model that wrote an AI message: its ``response_metadata``'s ``model_name``
    (langchain-openai, langchain-anthropic…) or ``model`` (Ollama, Bedrock…).

    >>> model_of({"response_metadata": {"model_name": "gpt-5"}}), model_of({})
    ('gpt-5', None)
    """
    metadata = data.get("response_metadata")
    if not isinstance(metadata, MAPPINGS) or not metadata:  # an empty one: no key asked
        return None
    for key in ("model_name", "model"):
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _read_blocks(
    content: list[Any], read: AiContent, leading: list[Thinking | Mapping[str, Any]]
) -> None:
    # The calls tool_calls and invalid_tool_calls hold (by _key), once a call block needs them.
    known: set[Any] | None = None
    texts: list[str] = []
    lines: list[str] = []
    refusals: list[str] = []
    images: list[ImageData] = []
    results: list[Mapping[str, Any]] = []
    unshown: list[str] = []
    calls: list[Any] | None = None  # the message's calls and those of blocks, once one adds
    invalid: list[Any] | None = None
    # The thinking of the reasoning block just read, and its id: OpenAI's summary parts come
    # as blocks of one id, one thought.
    last: tuple[Thinking, Any] | None = None
    for block in content:
        if type(block) is str:
            texts.append(block)
            continue
        if type(block) is not dict and not isinstance(block, Mapping):
            unshown.append("content block that is not an object skipped")
            continue
        kind = _kind(block)
        if kind == "non_standard" and isinstance(block.get("value"), Mapping):
            block = block["value"]  # a provider's own block LangChain has no standard for
            kind = _kind(block)
        if kind == "reasoning" and last is not None and block.get("id") == last[1]:
            more = reasoning(block)
            if more is not None and more.text and last[0].text:
                last[0].text = f"{last[0].text}\n\n{more.text}"
                continue
        last = None
        if kind in _TEXTS:
            text = block.get("text")
            if type(text) is str:
                texts.append(text)
        elif kind == "thinking" or kind == "redacted_thinking":
            said = block.get("thinking")
            # The usual thinking has text: anthropic_blocks' rule for the rest (a signature).
            thought = (
                Thinking(text=said)
                if type(said) is str and said.strip()
                else anthropic_blocks.thinking_of(block)
            )
            if thought is not None:
                leading.append(thought)
        elif kind == "reasoning":
            thought = reasoning(block)
            if thought is not None:
                leading.append(thought)
                if block.get("id") is not None:
                    last = (thought, block.get("id"))
        elif kind == "refusal":
            said = block.get("refusal")
            refusals.append(said if isinstance(said, str) and said else "(refused)")
        elif kind in _CALLS:
            if known is None:
                known = _known(read)
            own = block.get("call_id" if kind == "function_call" else "id")
            if type(own) is str and own in known:
                continue  # the usual block: a call of tool_calls
            call = _call_block(block, str(kind))
            if call is not None and _key(call) not in known:
                known.add(_key(call))
                calls = calls if calls is not None else list(read.calls)
                calls.append(call)
        elif kind == "invalid_tool_call":
            if known is None:
                known = _known(read)
            if _key(block) not in known:
                known.add(_key(block))
                invalid = invalid if invalid is not None else list(read.invalid)
                invalid.append(block)
        elif kind in _SERVER:
            leading.append(block)
        elif kind == "server_tool_result" or (
            kind != "tool_result" and anthropic_blocks.is_result_type(kind)
        ):
            results.append(block)  # settles its call once the message's calls are made
        elif kind in _MEDIA:
            shown = image(block) if kind in IMAGE_BLOCKS else data_line(block)
            if isinstance(shown, ImageData):
                images.append(shown)
            else:
                lines.append(shown)
        elif kind == "input_json_delta":
            pass  # a streamed fragment of a tool_use block's input: tool_calls holds the call
        else:
            label = kind if isinstance(kind, str) and kind else "block"
            lines.append(f"[{label}]")
            unshown.append(f"content block of type {label!r} is shown by its name only")
    text = "".join(texts)
    if lines:
        text = "\n\n".join([text, *lines] if text else lines)
    read.text, read.refusals, read.images, read.results, read.unshown = (
        text, refusals, images, results, unshown
    )  # fmt: skip
    if calls is not None:
        read.calls = calls
    if invalid is not None:
        read.invalid = invalid


def _known(read: AiContent) -> set[Any]:
    return {_key(c) for c in (*read.calls, *read.invalid) if isinstance(c, Mapping)}


def _key(call: Mapping[str, Any]) -> Any:
    """What tells a call apart: its id, else (a garbled call may have none) its name and
    arguments as the model wrote them."""
    call_id = call.get("id")
    if isinstance(call_id, str) and call_id:
        return call_id
    return (repr(call.get("name")), repr(call.get("args")))


def _call_block(block: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    """A call block as a ``tool_calls`` item (``{name, args, id}``); None for a streamed
    fragment without an id (the merged ``tool_calls`` hold its call)."""
    call_id = block.get("call_id") if kind == "function_call" else block.get("id")
    if not isinstance(call_id, str) or not call_id:
        if kind == "tool_call_chunk":
            return None
        call_id = None
    if kind == "tool_use":
        args = block.get("input")
        if args == {} and isinstance(block.get("partial_json"), str):
            args = block["partial_json"]
    else:
        args = block.get("arguments") if kind == "function_call" else block.get("args")
    name = block.get("name")
    return {"name": name if isinstance(name, str) else "", "args": parse_arguments(args),
            "id": call_id}  # fmt: skip


def server_call(block: Mapping[str, Any]) -> dict[str, Any]:
    """A server call block as ``{name, args, id}`` (``id`` None when it has none): Anthropic's
    ``server_tool_use`` / ``mcp_tool_use`` (``input``; streamed, ``partial_json`` while
    ``input`` is still ``{}``, as ``block_translators.anthropic`` reads it) or the standard
    ``server_tool_call`` (``args``; a JSON string in a ``server_tool_call_chunk``)."""
    args = block.get("args") if "args" in block else block.get("input")
    if args == {} and isinstance(block.get("partial_json"), str):
        args = block["partial_json"]
    name, call_id = block.get("name"), block.get("id")
    return {"name": name if isinstance(name, str) else "", "args": parse_arguments(args),
            "id": call_id if isinstance(call_id, str) and call_id else None}  # fmt: skip


def streamed(block: Any) -> tuple[str, str]:
    """The text and the thinking text a streamed chunk's block adds (``("", "")`` for any
    other block): what grows a message's streaming entries before it is complete."""
    if type(block) is str:
        return block, ""
    if not isinstance(block, Mapping):
        return "", ""
    kind = _kind(block)
    if kind == "non_standard" and isinstance(block.get("value"), Mapping):
        block = block["value"]
        kind = _kind(block)
    key = (
        "text"
        if kind in TEXT_BLOCKS
        else "thinking"
        if kind == "thinking"
        else "reasoning"
        if kind == "reasoning"
        else None
    )
    value = block.get(key) if key else None
    if type(value) is not str:
        return "", ""
    return (value, "") if key == "text" else ("", value)


def reasoning(block: Mapping[str, Any]) -> Thinking | None:
    """A ``reasoning`` block: LangChain's standard one (``reasoning``) or the OpenAI
    Responses item LangChain keeps in the content (``summary``, ``encrypted_content``)."""
    text = block.get("reasoning")
    if isinstance(text, str) and text:
        return Thinking(text=text)
    summary = block.get("summary")
    if isinstance(summary, list):
        parts = [s.get("text") for s in summary if isinstance(s, Mapping)]
        joined = "\n\n".join(p for p in parts if isinstance(p, str) and p)
        if joined:
            return Thinking(text=joined, form="summary")
    encrypted = block.get("encrypted_content")
    if isinstance(encrypted, str) and encrypted:
        return Thinking(form="encrypted", data=encrypted)
    # Anthropic's thinking of nothing but its signature, as the standard block keeps it.
    extras = block.get("extras")
    signature = extras.get("signature") if isinstance(extras, MAPPINGS) else None
    if isinstance(signature, str) and signature:
        return Thinking(form="encrypted", data=signature)
    return None


def server_outcome(block: Mapping[str, Any]) -> tuple[str, ToolStatus, ToolResult]:
    """A server tool's result block as its call's id, status and result: LangChain's
    standard ``server_tool_result`` (``tool_call_id``, ``status`` "success" / "error",
    ``output``: ``langchain_core.messages.content.ServerToolResult``) or Anthropic's own
    ``*_tool_result`` (``tool_use_id``; read as the Anthropic reader reads it)."""
    if block.get("type") == "server_tool_result":
        call_id, status = block.get("tool_call_id"), block.get("status")
        text, images = tool_content(block.get("output"))
        # No status (OpenAI's call still in progress keeps it in extras): not recorded.
        outcome = _STATUS.get(status if type(status) is str else "", "unknown")
        result = text_result(text, images=images)
    else:
        call_id = block.get("tool_use_id")
        outcome, result = anthropic_blocks.result_of(block)
    return (call_id if isinstance(call_id, str) else ""), outcome, result


# --- prompts and tool results ------------------------------------------------------------------


def prompt(content: Any) -> tuple[str, list[ImageData], dict[str, int]]:
    """A user's (or system's) text, its inline images, and how many images and files it
    holds (a message of nothing but them reads ``[image]``, ``[file]``)."""
    texts: list[str] = []
    images: list[ImageData] = []
    counts: dict[str, int] = {}
    for block in _blocks(content):
        if isinstance(block, str):
            texts.append(block)
            continue
        kind = _kind(block) if isinstance(block, Mapping) else None
        if kind == "non_standard" and isinstance(block.get("value"), Mapping):
            block = block["value"]
            kind = _kind(block)
        if kind in TEXT_BLOCKS and isinstance(block, Mapping):
            if isinstance(block.get("text"), str) and block["text"]:
                texts.append(block["text"])
        elif kind in IMAGE_BLOCKS:
            counts["images"] = counts.get("images", 0) + 1
            shown = image(block)
            if isinstance(shown, ImageData):
                images.append(shown)
        elif kind is not None:
            counts["files"] = counts.get("files", 0) + 1
    text = "\n\n".join(texts) if isinstance(content, list) else "".join(texts)
    if not text:
        text = "\n".join(f"[{key[:-1]}]" for key, n in counts.items() for _ in range(n))
    return text, images, counts


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [content] if content else []
    return list(content) if isinstance(content, list) else []


def tool_content(content: Any) -> tuple[str | None, list[ImageData]]:
    """A tool's content (a string or content blocks) as text and inline images: LangChain's
    standard blocks and Anthropic's read here (:func:`_tool_part`), any other part as the
    Responses reader reads it (``output_content``: OpenAI's, MCP's, text, JSON)."""
    return output_content(content, _tool_part)


def _tool_part(part: Mapping[str, Any]) -> str | ImageData | None:
    text = part.get("text")
    if type(text) is str:  # the usual block first, as output_content reads it
        return text
    kind = _kind(part)
    if kind in IMAGE_BLOCKS:
        return image(part)
    if kind in DATA_BLOCKS:
        return data_line(part)
    if kind == "search_result" or kind == "web_search_result":
        return anthropic_blocks.search_line(part)
    shown, images = output_content([part])
    return images[0] if images else shown or None


def image(part: Mapping[str, Any]) -> str | ImageData:
    """An image block, in any form LangChain passes on
    (``langchain_core.messages.content.ImageContentBlock`` and the v0 form
    ``block_translators.langchain_v0`` reads): inline data as :class:`ImageData`; a remote
    URL or a stored file named, never fetched (X-1).

    - standard (v1): ``base64`` + ``mime_type``, or ``url``, or ``file_id``;
    - v0: ``source_type`` "base64" (``data``), "url" (``url``) or "id" (``id``);
    - Anthropic: ``source`` of type "base64" (``data``, ``media_type``), "url" or "file";
    - OpenAI: ``image_url`` (a data URL or a remote one), ``file_id``."""
    source = part.get("source")
    source = source if isinstance(source, MAPPINGS) else part
    mime = source.get("mime_type") or source.get("media_type") or part.get("mimeType")
    mime = mime if isinstance(mime, str) and mime else "image"
    for key in ("base64", "data"):
        data = source.get(key)
        if isinstance(data, str) and data and not data.startswith("data:"):
            return ImageData(media_type=mime, data=data)
    url = part_image_url(part) or source.get("url") or source.get("data")
    shown = data_url_image(url)
    if shown is not None:
        return shown
    if isinstance(url, str) and url:
        return f"[image: {url}]"
    file_id = source.get("file_id") or (part.get("id") if part.get("source_type") == "id" else None)
    if isinstance(file_id, str) and file_id:
        return f"[image: {file_id}]"
    return "[image]"  # an image the block held, in a form not known here


def data_line(part: Mapping[str, Any]) -> str:
    """A file, audio or video block as one line naming it (its data is not shown as text):
    its name, where it is kept, its media type."""
    extras = part.get("extras")
    extras = extras if isinstance(extras, MAPPINGS) else {}
    where = (
        part.get("url"),
        part.get("file_id"),
        part.get("id") if part.get("source_type") == "id" else None,
    )
    named = [
        value
        for value in (
            extras.get("filename") or part.get("filename") or part.get("title"),
            next((w for w in where if isinstance(w, str) and w), None),
            part.get("mime_type"),
        )
        if isinstance(value, str) and value
    ]
    return f"[{part.get('type')}: {' · '.join(named)}]" if named else f"[{part.get('type')}]"
