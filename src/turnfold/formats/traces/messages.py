"""What a span says of the conversation, by each convention that records it: its messages in
Chat Completions shape, the arguments and result of a tool span, its usage, system prompt and
agent name.

The conventions: the GenAI semantic conventions (``gen_ai.input.messages`` /
``gen_ai.output.messages`` of parts, on the span or its details event, and the older
flattened ``gen_ai.prompt.N.*`` and per-message events), OpenInference's flattened
``llm.*_messages.N.*``, pydantic-ai's own part types and older tool attributes, the Vercel AI
SDK's ``ai.*`` attributes, OpenLLMetry's and OpenInference's LangChain ``ToolMessage`` result
and OpenInference's LangChain run values (:mod:`.langchain_messages`), Google ADK's tool
attributes and Strands' Bedrock Converse content. Every form is read into one shape, Chat
messages with a few private keys (:mod:`.chat_keys`) for what that shape has no place for,
which the reader's builder (:mod:`~turnfold.formats.traces.otlp`) feeds.

Apart from the reader because these are field maps of one span each, pure and testable alone;
the reader decides which span's messages are new and where they go in the transcript.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from turnfold.formats.anthropic_blocks import attachment_line
from turnfold.formats.common import (
    MAPPINGS,
    NameSet,
    as_int,
    as_list,
    parse_arguments,
    stringify,
    text_result,
)
from turnfold.formats.frameworks.strands import (
    MEDIA_KEYS,
    citations_text,
    guard_text,
    image_of,
    key_of,
    thinking_of,
    tool_result_content,
)
from turnfold.formats.frameworks.strands import attachment_line as converse_attachment
from turnfold.formats.openai_responses import output_content, plain_copy
from turnfold.formats.traces.chat_keys import _FAILED, _IMAGES, _PART, _UNSHOWN
from turnfold.formats.traces.gemini_cli_spans import (
    BRIEFING,
    agent_call_name,
    cut_json,
    cut_length,
    gemini_messages,
)
from turnfold.formats.traces.langchain_messages import (
    run_input_messages,
    run_output_messages,
    tool_message,
)
from turnfold.formats.traces.smolagents_spans import _smolagents_arguments, is_smolagents
from turnfold.formats.traces.spans import (
    ADK_EVENT_ID,
    ADK_TOOL_ARGUMENTS,
    ADK_TOOL_RESPONSE,
    Span,
    adk_agent_run,
    json_value,
)
from turnfold.model import ImageData, ToolResult, ToolStatus, Usage

#: The older per-message span events and the role each stands for.
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"


def unflatten(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened indexed attributes as a list of nested dicts.

    >>> unflatten({"m.0.message.role": "user", "m.0.message.tool_calls.0.tool_call.id": "c1"},
    ...           "m")
    [{'message': {'role': 'user', 'tool_calls': [{'tool_call': {'id': 'c1'}}]}}]
    """
    start = prefix + "."
    root = _nested([(k[len(start) :], v) for k, v in attributes.items() if k.startswith(start)])
    listed = _listed(root)
    return [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []


def _nested(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """Dotted keys and their values as nested dicts (a later key wins where they clash)."""
    root: dict[str, Any] = {}
    for key, value in items:
        node = root
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return root


def _indexed(
    attributes: Mapping[str, Any],
    prefix: str,
    memo: dict[str, tuple[list[tuple[str, Any]], dict[str, Any] | None]] | None,
) -> list[dict[str, Any]] | None:
    """OpenInference's flattened ``prefix.N.message.*`` attributes as Chat messages, as
    :func:`unflatten` and :func:`_openinference` make them; None when the span has none.

    Every model span repeats the history, so the attributes are grouped by index first: an
    index whose attributes equal the ones it had in the span before (``memo``, updated) is
    the message made then, not made again."""
    start = prefix + "."
    size = len(start)
    groups: dict[str, list[tuple[str, Any]]] = {}
    for key, value in attributes.items():
        if key.startswith(start):
            rest = key[size:]
            groups.setdefault(rest.split(".", 1)[0], []).append((rest, value))
    if not groups:
        return None
    if not all(index.isdigit() for index in groups):
        return []  # not a list of messages (as unflatten reads it)
    out: list[dict[str, Any]] = []
    made: dict[str, tuple[list[tuple[str, Any]], dict[str, Any] | None]] = {}
    for index in sorted(groups, key=int):
        items = groups[index]
        known = memo.get(index) if memo is not None else None
        message: dict[str, Any] | None
        if known is not None and known[0] == items:
            message = known[1]
        else:
            node = _listed(_nested(items)[index])
            message = _openinference(node) if isinstance(node, dict) else None
        made[index] = (items, message)
        if message is not None:
            out.append(message)
    if memo is not None:
        memo.clear()
        memo.update(made)
    return out


def _listed(node: Any) -> Any:
    """Dicts whose keys are all indices become lists in index order."""
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_listed(node[k]) for k in sorted(node, key=int)]
    return {k: _listed(v) for k, v in node.items()}


#: Parts of the GenAI message schemas (gen-ai-input-messages.json, gen-ai-output-messages.json)
#: that are entries of their own: ``ServerToolCallPart``, ``ServerToolCallResponsePart``,
#: ``CompactionPart``; and Gemini CLI's briefing (:data:`.gemini_cli_spans.BRIEFING`).
_ENTRY_PARTS = NameSet({"server_tool_call", "server_tool_call_response", "compaction", BRIEFING})
#: Parts that carry data by value (``BlobPart``), by URI (``UriPart``) or by a provider's file
#: id (``FilePart``).
_MEDIA_PARTS = NameSet({"blob", "uri", "file"})


# --- Strands' Bedrock Converse content --------------------------------------------------------

#: Converse blocks whose text is shown: a guardrail's content, a cited answer.
_CONVERSE_TEXTS = NameSet({"guardContent", "citationsContent"})


def is_converse(value: Any) -> bool:
    """A list of Bedrock Converse content blocks: dicts of a Converse key each and no ``type``
    (Chat, Anthropic and GenAI parts always carry one).

    >>> is_converse([{"text": "hi"}, {"toolUse": {"toolUseId": "c1", "name": "ls", "input": {}}}])
    True
    >>> is_converse([{"type": "text", "text": "hi"}]), is_converse([])
    (False, False)
    """
    return (
        type(value) is list
        and bool(value)
        and all(
            isinstance(block, MAPPINGS) and "type" not in block and key_of(block) is not None
            for block in value
        )
    )


def converse_parts(blocks: list[Any]) -> list[Any]:
    """Converse content blocks as the GenAI parts Strands' tracer makes of them when it writes
    the latest conventions (strands/telemetry/tracer.py, ``_map_content_blocks_to_otel_parts``):
    ``text``, ``toolUse`` and ``toolResult`` as the schemas' parts (a result's ``status`` kept,
    which that mapping drops), ``interruptResponse`` as its ``interrupt_response``, any other
    block as ``{"type": its key, "content": its value}``. Its older mode writes the blocks
    themselves (``serialize(message["content"])``), so the two modes read the same.

    >>> converse_parts([{"text": "hi"}, {"cachePoint": {"type": "default"}}])
    [{'type': 'text', 'content': 'hi'}, {'type': 'cachePoint', 'content': {'type': 'default'}}]
    """
    parts: list[Any] = []
    for block in blocks:
        if not isinstance(block, MAPPINGS):
            parts.append(block)  # warned about by _from_parts
        elif "interruptResponse" in block:
            value = block["interruptResponse"]
            value = value if isinstance(value, MAPPINGS) else {}
            parts.append({"type": "interrupt_response", "id": value.get("interruptId"),
                          "response": value.get("response")})  # fmt: skip
        elif "text" in block:
            parts.append({"type": "text", "content": block["text"]})
        elif "toolUse" in block:
            use = block["toolUse"] if isinstance(block["toolUse"], MAPPINGS) else {}
            parts.append({"type": "tool_call", "name": use.get("name"), "id": use.get("toolUseId"),
                          "arguments": use.get("input")})  # fmt: skip
        elif "toolResult" in block:
            result = block["toolResult"] if isinstance(block["toolResult"], MAPPINGS) else {}
            parts.append({"type": "tool_call_response", "id": result.get("toolUseId"),
                          "response": result.get("content"),
                          "status": result.get("status")})  # fmt: skip
        else:
            parts += [{"type": key, "content": value} for key, value in block.items()]
    return parts


def converse_result(content: list[Any]) -> tuple[str | None, list[ImageData]]:
    """A Converse ``toolResult``'s content as text and images, as the strands loader reads it
    (:func:`~turnfold.formats.frameworks.strands.tool_result_content`), a block of no known
    kind as its JSON.

    >>> converse_result([{"text": "3"}, {"json": {"sum": 3}}])
    ('3\\n{\\n  "sum": 3\\n}', [])
    """
    text, images, _ = tool_result_content(content, stringify)
    return text, images


def _from_parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A GenAI message (``{role, parts}``, or older ``{role, content, tool_calls}``) as Chat
    messages, in the order of its parts; a ``tool_call_response`` part is a tool message of
    its own, a server tool's call or response and a compaction a message of their own
    (``_PART``). Strands' parts for Converse blocks the schemas have no type for
    (:func:`converse_parts`) are read as Strands means them.

    >>> [m.get("content") or m[_PART]["type"] for m in _from_parts({"role": "assistant",
    ...     "parts": [{"type": "server_tool_call", "name": "web_search", "server_tool_call": {}},
    ...               {"type": "text", "content": "Sunny."}]})]
    ['server_tool_call', 'Sunny.']
    """
    role = message.get("role")
    role = role if isinstance(role, str) else "assistant"
    parts = message.get("parts")
    if not isinstance(parts, list):
        return [_older_message(role, message)]
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    images: list[list[str]] = []
    unshown: list[str] = []
    out: list[dict[str, Any]] = []

    def flush() -> None:
        """The parts gathered so far as one message, before a part that is a message."""
        if texts or reasoning or calls or images or unshown:
            out.append(_chat(role, texts[:], reasoning[:], calls[:], images[:], unshown[:]))
            for gathered in (texts, reasoning, calls, images, unshown):
                gathered.clear()

    for part in parts:
        if not isinstance(part, MAPPINGS):
            unshown.append("a message part that is not an object was skipped")
            continue
        kind = part.get("type")
        if isinstance(kind, str) and kind in _PYDANTIC_AI_PARTS:
            part = pydantic_ai_part(part, kind)
            kind = part.get("type")
        content = part.get("content")
        if kind == "text" and isinstance(content, str):
            texts.append(content)
        elif kind in ("reasoning", "thinking") and isinstance(content, str):
            reasoning.append(content)
        elif kind == "tool_call":
            calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
        elif kind == "tool_call_response" or kind in _ENTRY_PARTS:
            flush()
            if kind == "tool_call_response":
                out.append(_response_message(part))
            else:
                out.append({"role": role, _PART: part})
        elif kind in _MEDIA_PARTS or (kind in MEDIA_KEYS and isinstance(content, MAPPINGS)):
            image = _media_image(part, str(kind))
            # In a tool's message, media go with the response they follow.
            into = (
                out[-1]
                if role == "tool" and out and not texts and "tool_call_id" in out[-1]
                else None
            )
            if image is not None and (role in ("user", "assistant") or into is not None):
                (images if into is None else into.setdefault(_IMAGES, [])).append(image)
            else:
                line = _media_line(part, str(kind))
                if into is not None:
                    into["content"] = f"{into['content']}\n{line}" if into["content"] else line
                else:
                    texts.append(line)
                if image is not None:
                    # Prompts, the model's texts and tool results hold images: one of another
                    # role's message (a system prompt's) is named, and said not to be shown.
                    unshown.append(
                        f"an image ({image[0]}) in a message of role {role!r} is named, not shown: "
                        "only prompts, the model's texts and tool results show images"
                    )
        elif kind == "reasoningContent":
            thinking = thinking_of(content)
            if thinking is not None and thinking.text:
                reasoning.append(thinking.text)
            elif thinking is not None:  # a signature alone, or redacted: an entry of its own
                flush()
                out.append({"role": role, _PART: part})
            else:
                unshown.append("a reasoningContent part without reasoning was skipped")
        elif kind in _CONVERSE_TEXTS:
            text = guard_text(content) if kind == "guardContent" else citations_text(content)
            if text:
                texts.append(text)
        elif kind == "cachePoint":
            pass  # a prompt-cache marker (Converse's cachePoint block): nothing to show
        elif kind == "interrupt_response":
            texts.append(f"[interrupt response: {stringify(part.get('response'))}]")
        else:
            label = kind if isinstance(kind, str) and kind else "part"
            texts.append(f"[{label}]")
            unshown.append(f"a message part of type {label!r} is shown by its name only")
    if texts or reasoning or calls or images or unshown or not out:
        out.append(_chat(role, texts, reasoning, calls, images, unshown))
    return out


#: The part types pydantic-ai's instrumentation writes where the schemas have others
#: (pydantic_ai/_otel_messages.py): before its version 4, ``binary`` for a blob and
#: ``image-url``… for a uri; in every version ``thinking`` for reasoning (read as such).
_PYDANTIC_AI_PARTS = NameSet({"binary", "image-url", "audio-url", "video-url", "document-url"})


def pydantic_ai_part(part: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """A part of :data:`_PYDANTIC_AI_PARTS` as the schemas' part it stands for.

    >>> pydantic_ai_part({"type": "image-url", "url": "https://a.b/c.png"}, "image-url")
    {'type': 'uri', 'modality': 'image', 'uri': 'https://a.b/c.png'}
    """
    if kind == "binary":
        blob = {"type": "blob", "mime_type": part.get("media_type")}
        return blob if "content" not in part else {**blob, "content": part["content"]}
    uri: dict[str, Any] = {"type": "uri", "modality": kind.removesuffix("-url")}
    return uri if "url" not in part else {**uri, "uri": part["url"]}


def _response_message(part: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_call_response`` part as a tool message; a response that is Converse tool
    result content (Strands') is read as such, its ``status`` kept (:func:`converse_parts`)."""
    response = part.get("response", part.get("result"))
    message: dict[str, Any] = {"role": "tool", "tool_call_id": part.get("id")}
    if isinstance(part.get("name"), str):  # not the schema's: a Gemini response's (_typed)
        message["name"] = part["name"]
    if is_converse(response):
        text, shown = converse_result(response)
        message["content"] = text or ""
        if shown:
            message[_IMAGES] = [[image.media_type, image.data or ""] for image in shown]
    else:
        message["content"] = _text(response)
    if part.get("status") == "error":
        message[_FAILED] = True
    return message


def _chat(
    role: str,
    texts: list[str],
    reasoning: list[str],
    calls: list[dict[str, Any]],
    images: list[list[str]],
    unshown: list[str],
) -> dict[str, Any]:
    chat: dict[str, Any] = {"role": role}
    if texts:
        chat["content"] = "\n\n".join(texts)
    if reasoning:
        chat["reasoning_content"] = "\n\n".join(reasoning)
    if calls:
        chat["tool_calls"] = calls
    if images:
        chat[_IMAGES] = images
    if unshown:
        chat[_UNSHOWN] = unshown
    return chat


def _media_image(part: Mapping[str, Any], kind: str) -> list[str] | None:
    """A media part that is an image whose bytes are in the trace, as ``[media type, base64
    data]``: a ``BlobPart`` of an image, or a Converse ``image`` block (Strands' part
    ``{"type": "image", "content": {"format", "source"}}``: its tracer writes no bytes)."""
    if kind in MEDIA_KEYS:
        image = image_of(part.get("content")) if kind == "image" else None
        return [image.media_type, image.data or ""] if image is not None else None
    if kind != "blob":
        return None
    data, mime = part.get("content"), part.get("mime_type")
    mime = mime if isinstance(mime, str) and mime else None
    is_image = part.get("modality") == "image" or (mime or "").startswith("image/")
    return [mime or "image", data] if is_image and isinstance(data, str) and data else None


def _media_line(part: Mapping[str, Any], kind: str) -> str:
    """A media part as a line naming it: a Converse media block as the strands loader names it;
    a blob, URI or file part (a URI is never fetched, spec X-1), then the transcript the
    schemas give audio.

    >>> _media_line({"type": "uri", "modality": "image", "uri": "https://a.b/c.png"}, "uri")
    '[attachment: https://a.b/c.png]'
    """
    if kind in MEDIA_KEYS:
        return converse_attachment(kind, part.get("content"))
    media = part.get("mime_type")
    line = attachment_line(
        {
            "name": part.get("uri") or part.get("file_id") or part.get("modality") or kind,
            "media_type": media if isinstance(media, str) else None,
            "source": {"data": part.get("content") if kind == "blob" else None},
        }
    )
    transcript = part.get("transcript")
    return f"{line}\n{transcript}" if isinstance(transcript, str) and transcript else line


#: Where a server tool's response keeps its output, by provider: OpenAI's code interpreter
#: ``outputs``, Google's code execution ``output`` / ``result``, Anthropic's ``*_tool_result``
#: ``content``, a web search's ``results``.
_SERVER_OUTPUTS = ("output", "outputs", "result", "results", "content")
#: Gemini's ``CodeExecutionResult.outcome`` values that are failures.
_FAILED_OUTCOMES = frozenset({"OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"})


def server_tool_outcome(response: Any) -> tuple[ToolStatus, ToolResult]:
    """The status and result a ``server_tool_call_response``'s payload reports. The schemas
    leave the payload to the provider (``GenericServerToolCallResponse``: only ``type``), so
    it is ``success`` unless it states a failure as the providers write one (``is_error``, an
    ``error``, an ``error_code`` or a ``*_error`` type, a ``failed`` status or outcome); the
    whole payload stays the result's structured data.

    >>> server_tool_outcome({"type": "code_interpreter", "outputs": [{"logs": "4"}]})[1].text
    '4'
    >>> server_tool_outcome({"type": "web_search_tool_result",
    ...                      "content": {"type": "web_search_tool_result_error"}})[0]
    'error'
    """
    if not isinstance(response, MAPPINGS):
        text, images = output_content(response)
        return "success", text_result(text, images=images)
    value = next((response[k] for k in _SERVER_OUTPUTS if response.get(k) is not None), None)
    if value is not None:
        text, images = output_content(value)
    else:
        rest = {k: v for k, v in response.items() if k != "type"}
        text, images = (stringify(rest) if rest else None), []
    status: ToolStatus = (
        "error" if _states_failure(response) or _states_failure(value) else "success"
    )
    return status, text_result(text, images=images, structured=plain_copy(dict(response)))


def _states_failure(value: Any) -> bool:
    if not isinstance(value, MAPPINGS):
        return False
    kind = value.get("type")
    return (
        value.get("is_error") is True
        or value.get("isError") is True
        or bool(value.get("error"))
        or "error_code" in value
        or (isinstance(kind, str) and kind.endswith("_error"))
        or value.get("status") == "failed"
        or value.get("outcome") in _FAILED_OUTCOMES
    )


def _older_message(role: str, message: Mapping[str, Any]) -> dict[str, Any]:
    chat: dict[str, Any] = {"role": role}
    content = message.get("content")
    if content is not None:
        chat["content"] = content if isinstance(content, (str, list)) else stringify(content)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        chat["tool_calls"] = [
            _call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {})
                  .get("arguments"))
            for c in calls if isinstance(c, MAPPINGS)
        ]  # fmt: skip
    call_id = message.get("tool_call_id") or message.get("id")
    if role == "tool" and call_id is not None:
        chat["tool_call_id"] = call_id
    return chat


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else stringify(value)


def _openinference(message: Mapping[str, Any]) -> dict[str, Any]:
    """An unflattened ``llm.*_messages.N`` entry (``{"message": {role, content, …}}``)."""
    inner = message.get("message")
    inner = inner if isinstance(inner, MAPPINGS) else {}
    role = inner.get("role") if isinstance(inner.get("role"), str) else "assistant"
    # Gemini's word for the model: the google_genai and google_adk instrumentors write a
    # content's own role (``_get_attributes_from_content``), ``model`` for the model's turns.
    chat: dict[str, Any] = {"role": "assistant" if role == "model" else role}
    content = inner.get("content")
    if not isinstance(content, str) and isinstance(inner.get("contents"), list):
        content, reasoning = _contents_text(inner["contents"])
        if reasoning is not None:
            chat["reasoning_content"] = reasoning
    if isinstance(content, str):
        chat["content"] = content
    calls = [
        c.get("tool_call") for c in as_list(inner.get("tool_calls")) if isinstance(c, MAPPINGS)
    ]
    if calls:
        chat["tool_calls"] = [
            _call(c.get("id"), (c.get("function") or {}).get("name"),
                  (c.get("function") or {}).get("arguments"))
            for c in calls if isinstance(c, MAPPINGS)
        ]  # fmt: skip
    if inner.get("tool_call_id") is not None:
        chat["tool_call_id"] = inner["tool_call_id"]
    if isinstance(inner.get("name"), str) and chat["role"] != "assistant":
        # An assistant message's name is shown nowhere, and LangChain's create_agent gives
        # its reply the agent's name only once the model call returned: the response has
        # none, the next call's history repeats it with the name. Left out, they are one.
        chat["name"] = inner["name"]
    return chat


def _contents_text(contents: list[Any]) -> tuple[str | None, str | None]:
    """An OpenInference message's ``contents`` as its text and its reasoning, each its parts'
    texts joined, None where it has none. A part of ``message_content.type`` ``reasoning`` is
    the model's thinking: the google_adk instrumentor writes a Gemini part with ``thought``
    so (openinference-instrumentation-google-adk ``_wrappers.py``,
    ``_get_attributes_from_text_part``: 0.1.28 for ADK 1.x, 1.0.5 for ADK 2.x)."""
    texts: list[str] = []
    reasoning: list[str] = []
    for part in contents:
        inner = part.get("message_content") if isinstance(part, MAPPINGS) else None
        if isinstance(inner, MAPPINGS) and isinstance(inner.get("text"), str):
            (reasoning if inner.get("type") == "reasoning" else texts).append(inner["text"])
    return "\n\n".join(texts) or None, "\n\n".join(reasoning) or None


def _genai_list(value: Any, memo: _History | None = None) -> list[dict[str, Any]] | None:
    text = value if isinstance(value, str) else None
    if memo is not None and text is not None:
        grown = memo.grown(text)
        if grown is not None:
            return grown
    value = json_value(value)
    if cut_length(value) is not None:
        # Cut by its tracer (Gemini CLI's, at 10,000 characters): the messages of a list
        # written whole before the cut (one message cut is none); the reader warns of it.
        whole = cut_json(value)
        value = whole if isinstance(whole, list) else []
    if isinstance(value, MAPPINGS) and ("role" in value or "parts" in value):
        # One message written alone, not in a list (Gemini CLI's own ``llm_call`` spans write
        # their reply so): the list of it, rather than a reply lost without a word.
        value = [value]
    if not isinstance(value, list):
        return None
    out = _converted(value)
    if memo is not None and text is not None:
        memo.keep(text, out)
    return out


def _converted(messages: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in gemini_messages(messages):  # Gemini CLI's own spans write Gemini contents
        if isinstance(message, MAPPINGS):
            out += _from_parts(message)
    return out


class _History:
    """The last ``gen_ai.input.messages`` text of one agent's model spans and its messages.

    Each model call's input is the one before it with the new messages appended, and an
    instrumentor writes the same messages as the same text: when a text is the last one with
    ``,`` and more elements where its closing ``]`` was, only those elements are decoded (JSON
    reads a prefix the same whatever follows it), the earlier ones are the same messages."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.messages: list[dict[str, Any]] = []
        #: OpenInference's form: the last input's attributes and message for each index.
        self.indexed: dict[str, tuple[list[tuple[str, Any]], dict[str, Any] | None]] = {}
        #: The last input :meth:`.otlp._Builder.add_new` counted by content, and its counts.
        self.counted: list[dict[str, Any]] = []
        self.occurrences: Counter[str] = Counter()

    def grown(self, text: str) -> list[dict[str, Any]] | None:
        """The messages of ``text`` when it extends the last text, else None."""
        last = self.text
        if last is None or len(text) <= len(last) or text[len(last) - 1] != ",":
            return None
        if not text.startswith(last[:-1]):
            return None
        tail = json_value("[" + text[len(last) :])
        if not isinstance(tail, list):
            return None
        self.keep(text, self.messages + _converted(tail))
        return self.messages

    def keep(self, text: str, messages: list[dict[str, Any]]) -> None:
        # Only a non-empty array closed by its last character can be extended as above.
        grows = len(text) > 2 and text[0] == "[" and text[-1] == "]" and bool(messages)
        self.text, self.messages = (text, messages) if grows else (None, [])


def _flattened_legacy(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``gen_ai.prompt.N.role/content`` and ``gen_ai.completion.N.*`` (OpenLLMetry's form;
    Koog's calls and results in it read as Koog means them: :func:`koog_messages`)."""
    messages: list[Any] = []
    for message in unflatten(attributes, prefix):
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            message = {**message, "tool_calls": [
                {"id": c.get("id"), "function": {"name": c.get("name"),
                                                  "arguments": c.get("arguments")}}
                for c in calls if isinstance(c, MAPPINGS)
            ]}  # fmt: skip
        messages.append(message)
    return [
        _older_message(str(m.get("role") or "assistant"), m)
        for m in koog_messages(messages)
        if isinstance(m, MAPPINGS)
    ]


def koog_messages(messages: list[Any]) -> list[Any]:
    """Koog's messages as it writes them (``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``:
    Koog 0.3's, and its ``LangfuseSpanAdapter.kt`` since, JetBrains/koog
    ``agents-features-opentelemetry/.../integration/langfuse``): a message whose ``content``
    is the JSON text of a list of Chat tool calls (``encodeToolCallsContent``; of role
    ``tool`` in Koog 0.3, ``assistant`` since) is the assistant's calls; a ``tool`` message of
    text is the result of the oldest of those calls it has not answered (Koog writes no call
    id with a result). No other tracer writes a list of Chat calls as a message's text, so
    other messages are left as they are.

    >>> koog_messages([{"role": "tool", "content": '[{"function": {"name": "ls", '
    ...                 '"arguments": "{}"}, "id": "c1", "type": "function"}]'},
    ...                {"role": "tool", "content": "a.txt"}])[1]
    {'role': 'tool', 'content': 'a.txt', 'tool_call_id': 'c1'}
    """
    out: list[Any] = []
    waiting: list[Any] = []  # the ids of the calls asked for and not answered, oldest first
    for message in messages:
        calls = _koog_calls(message.get("content")) if isinstance(message, MAPPINGS) else None
        if calls is not None:
            out.append({"role": "assistant", "content": None, "tool_calls": calls})
            waiting += [c.get("id") for c in calls]
        elif (
            isinstance(message, MAPPINGS)
            and message.get("role") == "tool"
            and not message.get("tool_call_id")
            and waiting
        ):
            out.append({**message, "tool_call_id": waiting.pop(0)})
        else:
            out.append(message)
    return out


def _koog_calls(content: Any) -> list[dict[str, Any]] | None:
    listed = json_value(content) if isinstance(content, str) and content[:1] == "[" else None
    if not isinstance(listed, list) or not listed:
        return None
    if not all(
        isinstance(c, MAPPINGS)
        and c.get("type") == "function"
        and isinstance(c.get("function"), MAPPINGS)
        for c in listed
    ):
        return None
    return [dict(c) for c in listed]


def completion_prompts(a: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """A completion call's prompts as user messages, where OpenInference records no messages:
    ``llm.prompts``, a list of texts (llama_index's ``LLMCompletionStartEvent``,
    openinference-instrumentation-llama-index ``_handler.py``; an OTLP array, or JSON text
    where a backend kept it so), or, as the conventions now write it, flattened
    ``llm.prompts.N.prompt.text``; None where the span has neither.

    >>> completion_prompts({"llm.prompts": ["What is 2+2?"]})
    [{'role': 'user', 'content': 'What is 2+2?'}]
    >>> completion_prompts({"llm.prompts.0.prompt.text": "Once upon"})
    [{'role': 'user', 'content': 'Once upon'}]
    """
    listed = json_value(a.get("llm.prompts"))
    if not isinstance(listed, list):
        flat = unflatten(a, "llm.prompts")
        listed = [(p.get("prompt") or {}).get("text") for p in flat] if flat else None
    if not listed:
        return None
    return [{"role": "user", "content": _text(p)} for p in listed if p is not None]


def completion_choices(a: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A completion call's reply: ``llm.choices.N.completion.text`` (the conventions' form,
    the first choice: more are alternatives), else its ``output.value``, which llama_index
    writes as the response's text (``LLMCompletionEndEvent``: ``event.response.text``)."""
    choices = unflatten(a, "llm.choices")
    texts = [(c.get("completion") or {}).get("text") for c in choices[:1]]
    if not texts:
        texts = [a.get("output.value")]
    return [{"role": "assistant", "content": t} for t in texts if isinstance(t, str) and t]


def _event_messages(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for name, attributes in span.events:
        if name == _DETAILS_EVENT:
            inputs += _genai_list(attributes.get("gen_ai.input.messages")) or []
            outputs += _genai_list(attributes.get("gen_ai.output.messages")) or []
        elif name in _MESSAGE_EVENTS:
            raw = attributes.get("gen_ai.event.content", attributes.get("content"))
            body = json_value(raw)
            role = _MESSAGE_EVENTS[name]
            if is_converse(body):
                # Strands' older mode: the message's Converse blocks; a user message that holds
                # toolResult blocks is a gen_ai.tool.message (tracer._get_event_name_for_message)
                role = "user" if role == "tool" else role
                inputs += _from_parts({"role": role, "parts": converse_parts(body)})
                continue
            body = body if isinstance(body, MAPPINGS) else {"content": _plain(raw, body)}
            fields = {**attributes, **body}
            inputs.append(_older_message(role, fields))
        elif name == "gen_ai.choice":
            raw = attributes.get("gen_ai.event.content", attributes.get("message"))
            body = json_value(raw)
            if is_converse(body):  # Strands' model span: the reply's Converse blocks
                outputs += _from_parts({"role": "assistant", "parts": converse_parts(body)})
                continue
            body = (
                body.get("message", body)
                if isinstance(body, MAPPINGS)
                else {"content": _plain(raw, body)}
            )
            outputs.append(_older_message("assistant", body if isinstance(body, MAPPINGS) else {}))
    return inputs, outputs


def _plain(raw: Any, decoded: Any) -> Any:
    """An event's content that is no message object: a list as decoded (content parts), else
    the text as written. Strands' agent span ends with ``str(AgentResult)``, plain text that
    may happen to read as JSON (an answer ``11``)."""
    return decoded if isinstance(decoded, list) or not isinstance(raw, str) else raw


def model_messages(
    span: Span, history: _History | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A span's input and output messages in Chat Completions shape, from whichever
    convention recorded them; ``history`` holds the last input of the same agent's model
    spans, which this one's input usually extends."""
    if span.chat is not None:  # decoded with the span (MLflow's): copies, the reader adds to them
        return list(span.chat[0]), list(span.chat[1])
    a = span.attributes
    inputs = _genai_list(a.get("gen_ai.input.messages"), history)
    outputs = _genai_list(a.get("gen_ai.output.messages"))
    if inputs is None:
        inputs = _indexed(a, "llm.input_messages", history.indexed if history else None)
    if outputs is None:
        outputs = _indexed(a, "llm.output_messages", None)
    if inputs is None and "input.value" in a:
        # OpenInference's LangChain span without its flattened messages (hidden by its
        # TraceConfig): the run's inputs it would have flattened them from.
        inputs = run_input_messages(a["input.value"])
    if outputs is None and "output.value" in a:
        outputs = run_output_messages(a["output.value"])
    if inputs is None:
        inputs = completion_prompts(a)
        if inputs is not None and outputs is None:
            outputs = completion_choices(a)
    if inputs is None and any(k.startswith("gen_ai.prompt.") for k in a):
        inputs = _flattened_legacy(a, "gen_ai.prompt")
    if outputs is None and any(k.startswith("gen_ai.completion.") for k in a):
        outputs = _flattened_legacy(a, "gen_ai.completion")
    if inputs is None and "ai.prompt.messages" in a:
        listed = json_value(a["ai.prompt.messages"])
        if isinstance(listed, list):
            inputs = _converted([ai_sdk_message(m) for m in listed if isinstance(m, MAPPINGS)])
    if outputs is None and any(k in a for k in _AI_SDK_RESPONSE):
        outputs = _from_parts(ai_sdk_response(a))
    event_in, event_out = _event_messages(span)
    return (inputs if inputs is not None else event_in), (
        outputs if outputs is not None else event_out
    )


#: Where the Vercel AI SDK puts a provider call's response (``recordSpan`` attributes).
_AI_SDK_RESPONSE = ("ai.response.text", "ai.response.toolCalls", "ai.response.object")


def _ai_sdk_media(part: Mapping[str, Any]) -> dict[str, Any]:
    """An AI SDK ``image`` or ``file`` part as a blob (base64 data) or uri part."""
    data = part.get("image", part.get("data"))
    media = part.get("mediaType", part.get("mimeType"))
    modality = "image" if part.get("type") == "image" else None
    if isinstance(data, str) and data.startswith(("http://", "https://")):
        return {"type": "uri", "uri": data, "mime_type": media, "modality": modality}
    return {"type": "blob", "content": data, "mime_type": media, "modality": modality}


def ai_sdk_message(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Vercel AI SDK message (``ai.prompt.messages``: ``{role, content}``, the content a
    string or ``text`` / ``reasoning`` / ``image`` / ``file`` / ``tool-call`` /
    ``tool-result`` parts) as a GenAI message of parts. A tool result's ``output`` (v5: a
    ``{type, value}`` whose ``error-*`` types are failures) or ``result`` (v4) is the
    response."""
    content = message.get("content")
    if not isinstance(content, list):
        return message  # a string: the Chat shape already
    parts: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, MAPPINGS) else None
        if not isinstance(part, MAPPINGS):
            parts.append(part)
        elif kind in ("text", "reasoning"):
            parts.append({"type": kind, "content": part.get("text")})
        elif kind == "tool-call":
            arguments = part.get("input", part.get("args"))
            parts.append({"type": "tool_call", "id": part.get("toolCallId"),
                          "name": part.get("toolName"), "arguments": arguments})  # fmt: skip
        elif kind == "tool-result":
            output = part.get("output", part.get("result"))
            failed = part.get("isError") is True
            if (
                isinstance(output, MAPPINGS)
                and isinstance(output.get("type"), str)
                and "value" in output
            ):
                failed = failed or output["type"].startswith("error")
                output = output["value"]
            response = {"type": "tool_call_response", "id": part.get("toolCallId"),
                        "response": output}  # fmt: skip
            parts.append({**response, "status": "error"} if failed else response)
        elif kind in ("image", "file"):
            parts.append(_ai_sdk_media(part))
        else:
            parts.append(part)  # of no type the schemas have: shown by its name
    return {"role": message.get("role"), "parts": parts}


def ai_sdk_response(a: Mapping[str, Any]) -> dict[str, Any]:
    """A provider call's response as the AI SDK records it: ``ai.response.reasoning``,
    ``ai.response.text`` (``ai.response.object`` for an object), ``ai.response.toolCalls``
    (``[{toolCallId, toolName, input | args}]``, ``input`` a JSON string in 5.0 and later), as
    one GenAI assistant message."""
    parts: list[dict[str, Any]] = []
    reasoning = a.get("ai.response.reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"type": "reasoning", "content": reasoning})
    text = a.get("ai.response.text") or a.get("ai.response.object")
    if isinstance(text, str) and text:
        parts.append({"type": "text", "content": text})
    for call in as_list(json_value(a.get("ai.response.toolCalls"))):
        if isinstance(call, MAPPINGS):
            # The SDK writes a call's input here as the provider gave it, JSON text, where the
            # next step's ai.prompt.messages holds it parsed: read alike, the response is
            # known as that history when it comes again.
            arguments = parse_arguments(call.get("input", call.get("args")))
            parts.append({"type": "tool_call", "id": call.get("toolCallId"),
                          "name": call.get("toolName"), "arguments": arguments})  # fmt: skip
    return {"role": "assistant", "parts": parts}


#: pydantic-ai's ``gen_ai.usage.details.*`` (``RequestUsage.opentelemetry_attributes``) that
#: hold an Anthropic response's one-hour cache writes (``extract_usage_details``): its own, and
#: those of its compaction iterations, which pydantic-ai adds to the writes it prices.
_ONE_HOUR_WRITES = ("gen_ai.usage.details.ephemeral_1h_input_tokens",
                    "gen_ai.usage.details.compaction_ephemeral_1h_input_tokens")  # fmt: skip


def span_usage(a: Mapping[str, Any]) -> Usage | None:
    """``gen_ai.usage.*`` (and the older ``prompt_tokens``), ``llm.token_count.*`` or the AI
    SDK's ``ai.usage.*`` (4.x ``promptTokens``, 5.0 ``cachedInputTokens``, 6.0 the
    ``inputTokenDetails`` / ``outputTokenDetails``). The semantic conventions have no name for
    the one-hour part of the cache writes; pydantic-ai's details give it
    (:data:`_ONE_HOUR_WRITES`)."""

    def first(*keys: str) -> int | None:
        for key in keys:
            count = as_int(a.get(key))
            if count is not None:
                return count
        return None

    usage = Usage(
        input_tokens=first("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                           "llm.token_count.prompt", "ai.usage.inputTokens",
                           "ai.usage.promptTokens"),
        output_tokens=first("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                            "llm.token_count.completion", "ai.usage.outputTokens",
                            "ai.usage.completionTokens"),
        cache_read_tokens=first("gen_ai.usage.cache_read.input_tokens",
                                "gen_ai.usage.cache_read_input_tokens",
                                "llm.token_count.prompt_details.cache_read",
                                "ai.usage.inputTokenDetails.cacheReadTokens",
                                "ai.usage.cachedInputTokens"),
        cache_write_tokens=first("gen_ai.usage.cache_creation.input_tokens",
                                 "gen_ai.usage.cache_creation_input_tokens",
                                 "llm.token_count.prompt_details.cache_write",
                                 "ai.usage.inputTokenDetails.cacheWriteTokens"),
        reasoning_tokens=first("gen_ai.usage.reasoning.output_tokens",
                               "llm.token_count.completion_details.reasoning",
                               "ai.usage.outputTokenDetails.reasoningTokens",
                               "ai.usage.reasoningTokens"),
    )  # fmt: skip
    hour = sum(as_int(a.get(key)) or 0 for key in _ONE_HOUR_WRITES)
    # A part of the writes: a count above them is no one-hour split of these writes.
    if 0 < hour <= (usage.cache_write_tokens or 0):
        usage.cache_write_1h_tokens = hour
    return None if usage == Usage() else usage


#: Where pydantic-ai's instrumentation before its version 3 puts a tool span's arguments and
#: result (pydantic_ai/_instrumentation.py: ``tool_arguments_attr``, ``tool_result_attr``).
_PYDANTIC_AI_ARGUMENTS = "tool_arguments"
_PYDANTIC_AI_RESULT = "tool_response"


def tool_arguments(span: Span) -> Any:
    """A tool span's arguments, for a call no model span asked for: ``gen_ai.tool.call.arguments``
    (pydantic-ai's older ``tool_arguments``), the AI SDK's ``ai.toolCall.args``, Google ADK's
    ``gcp.vertex.agent.tool_call_args``, OpenLLMetry's
    ``traceloop.entity.input`` (:func:`traceloop_arguments`), OpenInference's ``input.value``
    (smolagents' as the tool was called: :func:`_smolagents_arguments`), the ``tool_call`` part
    of its input
    messages (Strands' latest mode) or Strands' older ``gen_ai.tool.message`` event, whose
    ``content`` is the tool's input (strands/telemetry/tracer.py, ``start_tool_call_span``)."""
    a = span.attributes
    if "gen_ai.tool.call.arguments" in a:
        return _langchain_tool_start(parse_arguments(a["gen_ai.tool.call.arguments"]))
    if _PYDANTIC_AI_ARGUMENTS in a:
        return parse_arguments(a[_PYDANTIC_AI_ARGUMENTS])
    if "ai.toolCall.args" in a:
        return parse_arguments(a["ai.toolCall.args"])
    if ADK_TOOL_ARGUMENTS in a:
        return parse_arguments(a[ADK_TOOL_ARGUMENTS])
    if _TRACELOOP_INPUT in a:
        return _langchain_tool_start(traceloop_arguments(a[_TRACELOOP_INPUT]))
    if "input.value" in a:
        return _smolagents_arguments(parse_arguments(a["input.value"]), a)
    inputs, _ = model_messages(span)
    for message in inputs:
        for call in as_list(message.get("tool_calls")):
            return parse_arguments((call.get("function") or {}).get("arguments"))
    for name, attributes in span.events:
        if name == "gen_ai.tool.message" and "content" in attributes:
            return parse_arguments(attributes["content"])
    return None


#: What OpenLLMetry's LangChain instrumentation puts in a tool span's
#: ``gen_ai.tool.call.arguments`` (``traceloop.entity.input`` in its versions before that):
#: the callback's arguments (``on_tool_start``).
_LANGCHAIN_TOOL_START = frozenset({"input_str", "tags", "metadata", "inputs", "kwargs"})


def _langchain_tool_start(value: Any) -> Any:
    """A tool's arguments, the tool's own when ``value`` is the LangChain callback's
    (:data:`_LANGCHAIN_TOOL_START`): its ``inputs``, else its ``input_str``."""
    if isinstance(value, dict) and "input_str" in value and value.keys() <= _LANGCHAIN_TOOL_START:
        inputs = value.get("inputs")
        return inputs if isinstance(inputs, dict) and inputs else value["input_str"]
    return value


def langchain_tool_message(span: Span) -> Mapping[str, Any] | None:
    """The fields of the LangChain ``ToolMessage`` a tool span records as its result, else
    None: OpenLLMetry's LangChain instrumentation writes ``{"output": <the message as
    langchain's dumpd serializes it>}`` (``gen_ai.tool.call.result``, before it
    ``traceloop.entity.output``; ``{"lc": 1, "type": "constructor", "id": [...,
    "ToolMessage"], "kwargs": {content, tool_call_id, status…}}``), OpenInference's the
    message itself as ``output.value`` (``message_to_dict``'s ``{"type": "tool", "data":
    {…}}``, :func:`.langchain_messages.tool_message`)."""
    a = span.attributes
    raw = a.get("gen_ai.tool.call.result", a.get(_TRACELOOP_OUTPUT))
    if isinstance(raw, str) and '"ToolMessage"' in raw:
        value = json_value(raw)
        output = value.get("output") if isinstance(value, MAPPINGS) else None
        if isinstance(output, MAPPINGS) and output.get("lc") == 1:
            kind, fields = output.get("id"), output.get("kwargs")
            if isinstance(kind, list) and kind[-1:] == ["ToolMessage"]:
                return fields if isinstance(fields, MAPPINGS) else None
        return None
    raw = a.get("output.value") if raw is None else None
    # Most outputs are no message: only one naming a call id is decoded.
    if isinstance(raw, str) and '"tool_call_id"' in raw:
        return tool_message(raw)
    return None


#: Google ADK's own tracer (google/adk/telemetry/tracing.py, ``trace_tool_call``, in its 1.x
#: releases and its schema 1 since) writes a tool span's arguments and result
#: (:data:`.spans.ADK_TOOL_ARGUMENTS`, :data:`.spans.ADK_TOOL_RESPONSE`: the function
#: response's ``response``, which wraps a value that is no dict as ``{"result": value}``), and
#: this result where the tool sent no response. Its ``"{}"`` where content capture was off are
#: taken out before the spans are read (:func:`.adk_spans.drop_uncaptured_placeholders`):
#: what is left is what the tool was called with and returned, ``{}`` an empty object.
#: (OpenInference's ADK instrumentor writes ``input.value`` only for arguments that are not
#: empty.)
_ADK_UNSPECIFIED = {"result": "<not specified>"}


def tool_response(span: Span) -> tuple[str | None, list[ImageData], bool]:
    """A tool span's result and whether it says the tool failed: ``gen_ai.tool.call.result``,
    OpenInference's ``output.value``, pydantic-ai's older ``tool_response``, the AI SDK's
    ``ai.toolCall.result``, OpenLLMetry's ``traceloop.entity.output`` or Google ADK's
    ``gcp.vertex.agent.tool_response`` (the return value as JSON, read by
    :func:`returned_content`; ADK's as the ADK reader reads a function response,
    :func:`adk_response`), else the ``tool_call_response`` of its output
    messages (Strands' latest mode, which writes ``gen_ai.tool.call.result`` only for a
    success) or Strands' older ``gen_ai.choice`` event, whose ``message`` is the result's
    content (``end_tool_call_span``). Strands' results are Converse tool result content
    (``[{"text": …}]``)."""
    a = span.attributes
    raw = a.get("gen_ai.tool.call.result", a.get("output.value", a.get(_PYDANTIC_AI_RESULT)))
    raw = a.get("ai.toolCall.result") if raw is None else raw
    raw = a.get(_TRACELOOP_OUTPUT) if raw is None else raw
    adk = ADK_EVENT_ID in a  # ADK's own tool span: its result is a function response's
    if raw is None and ADK_TOOL_RESPONSE in a:
        raw, adk = a[ADK_TOOL_RESPONSE], True
    if raw is not None:
        value = json_value(raw)
        failed = False
        if _is_function_response(value, a):
            adk, value = True, value["response"]
        if adk:
            if value == _ADK_UNSPECIFIED:
                return None, [], False
            value, failed = adk_response(value)
        text, images = converse_result(value) if is_converse(value) else returned_content(value)
        return text, images, failed
    value = a.get("gen_ai.output.messages")
    messages = _genai_list(value) if value is not None else None
    for name, attributes in span.events if messages is None else ():
        if name == _DETAILS_EVENT:
            messages = (messages or []) + (
                _genai_list(attributes.get("gen_ai.output.messages")) or []
            )
        elif name == "gen_ai.choice" and "message" in attributes:
            body = json_value(attributes["message"])
            if is_converse(body):
                return (*converse_result(body), False)
            return (*output_content(_plain(attributes["message"], body)), False)
    for message in messages or ():
        if message.get("role") == "tool" and "tool_call_id" in message:
            images = [ImageData(media_type=m, data=d) for m, d in message.get(_IMAGES, ())]
            return message.get("content"), images, bool(message.get(_FAILED))
    return None, [], False


#: The content parts a tool's result may be made of, as the readers show them
#: (:func:`~turnfold.formats.openai_responses.output_content`): text (MCP's, the Responses
#: API's, LangChain's blocks), an image, a code interpreter's logs.
_IMAGE_PARTS = frozenset({"input_image", "image_url", "computer_screenshot", "image"})


def _is_content(value: Any) -> bool:
    return (
        type(value) is list
        and bool(value)
        and all(
            isinstance(part, MAPPINGS)
            and (
                isinstance(part.get("text"), str)
                or part.get("type") in _IMAGE_PARTS
                or isinstance(part.get("logs"), str)
            )
            for part in value
        )
    )


def returned_content(value: Any) -> tuple[str | None, list[ImageData]]:
    """A tool's result as a tracer wrote it (its JSON decoded) as text and inline images: a
    list of content parts (an MCP tool's ``[{"type": "text", "text": …}]``, images) or one
    such part as its texts and images; any other list, like any object or number, is the
    value the tool returned, shown whole as JSON, as the tool returned it (never its items
    joined as if they were parts, a number among them dropped).

    >>> returned_content([{"type": "text", "text": "a.txt"}])
    ('a.txt', [])
    >>> returned_content([1, 2])
    ('[\\n  1,\\n  2\\n]', [])
    """
    if type(value) is list and not _is_content(value):
        return stringify(value), []
    return output_content(value)


def adk_response(response: Any) -> tuple[Any, bool]:
    """A Google ADK function response as the value its tool returned and whether the tool
    failed, as the ADK reader reads one (:mod:`~turnfold.formats.frameworks.adk`): ``{"error":
    message}`` is ADK's failure (``on_tool_error_callback``, an unknown tool), ``{"result":
    value}`` the wrapper of a value that is no dict.

    >>> adk_response({"result": [1, 2]}), adk_response({"error": "boom"})
    (([1, 2], False), ('boom', True))
    """
    if isinstance(response, MAPPINGS):
        error = response.get("error")
        if error not in (None, "", {}):
            return error, True
        if response.keys() == {"result"}:
            return response["result"], False
    return response, False


def _is_function_response(value: Any, a: Mapping[str, Any]) -> bool:
    """A Gemini ``FunctionResponse`` (``{"id", "name", "response"}``) of the span's tool: what
    Google ADK's OpenInference instrumentor writes as a tool span's ``output.value``
    (``_TraceToolCall``: the event's first function response, ``model_dump_json``), whose
    ``response`` is the tool's result."""
    return (
        isinstance(value, MAPPINGS)
        and isinstance(value.get("response"), MAPPINGS)
        and value.keys() <= _FUNCTION_RESPONSE
        and value.get("name") in (a.get("tool.name"), a.get("gen_ai.tool.name"))
    )


#: The fields of a Gemini ``FunctionResponse`` as pydantic dumps it (``exclude_none``).
_FUNCTION_RESPONSE = frozenset({"id", "name", "response", "will_continue", "scheduling", "parts"})


#: What OpenLLMetry's decorators write of the decorated function's call
#: (traceloop/sdk/decorators/base.py, ``_handle_span_input`` / ``_handle_span_output``): its
#: arguments as JSON ``{"args": [...], "kwargs": {...}}``, its return value as JSON; both cut at
#: ``OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`` (then no longer JSON: kept as written).
_TRACELOOP_INPUT = "traceloop.entity.input"
_TRACELOOP_OUTPUT = "traceloop.entity.output"
_TRACELOOP_KIND = "traceloop.span.kind"


def traceloop_arguments(raw: Any) -> Any:
    """A decorated function's arguments as a call's: its keyword arguments when it was given
    no positional ones (a model's call is given keywords: ``tool(**arguments)``), else the
    ``{"args", "kwargs"}`` object as written (an empty ``kwargs`` left out).

    >>> traceloop_arguments('{"args": [], "kwargs": {"order_id": "A-1"}}')
    {'order_id': 'A-1'}
    >>> traceloop_arguments('{"args": ["a@b.c"], "kwargs": {}}')
    {'args': ['a@b.c']}
    """
    value = json_value(raw)
    if not isinstance(value, MAPPINGS) or not value.keys() <= {"args", "kwargs"}:
        return value
    args, kwargs = value.get("args"), value.get("kwargs")
    if not args and isinstance(kwargs, MAPPINGS):
        return dict(kwargs)
    return {key: item for key, item in value.items() if key == "args" or item}


def traceloop_text(a: Mapping[str, Any], *, prompt: bool) -> str | None:
    """An OpenLLMetry ``@agent`` or ``@workflow`` span's prompt (its function's one argument
    that is a string, else its arguments as written) or reply (its return value: a string as
    it is, else its JSON). Only a decorator's span, whose input is ``{"args", "kwargs"}``:
    the LangChain instrumentation of OpenLLMetry's versions before ``gen_ai.operation.name``
    wrote these attributes too, its callbacks' arguments, which its model spans carry as
    messages."""
    given = json_value(a.get(_TRACELOOP_INPUT))
    if not isinstance(given, MAPPINGS) or given.keys() != {"args", "kwargs"}:
        return None
    raw = a.get(_TRACELOOP_INPUT if prompt else _TRACELOOP_OUTPUT)
    value = json_value(raw)
    if prompt:
        kwargs = given["kwargs"]
        values = [
            *as_list(given["args"]),
            *(kwargs.values() if isinstance(kwargs, MAPPINGS) else ()),
        ]
        value = values[0] if len(values) == 1 else value
    if isinstance(value, str):
        return value or None
    return raw if isinstance(raw, str) and raw else None


def agent_name(span: Span) -> str | None:
    """The name of the agent a span runs: ``gen_ai.agent.name`` or OpenInference's
    ``agent.name`` (a GenAI workflow's: ``gen_ai.workflow.name``); an OpenLLMetry ``@agent``
    or ``@workflow`` span's own name (``traceloop.entity.name``) first, since every span
    inside an ``@agent`` is given that agent's ``gen_ai.agent.name``
    (``default_span_processor_on_start``), a workflow it runs too; else the agent Google ADK
    1.x names its span after (``agent_run [<name>]``: :func:`.spans.adk_agent_run`)."""
    a = span.attributes
    named = agent_call_name(span)  # Gemini CLI writes its own name over its agent's
    if named is not None:
        return named
    keys: tuple[str, ...] = ("gen_ai.agent.name", "agent.name", "gen_ai.workflow.name")
    if a.get(_TRACELOOP_KIND) in ("agent", "workflow"):
        keys = ("traceloop.entity.name", *keys)
    named = next((a[k] for k in keys if isinstance(a.get(k), str) and a[k]), None)
    # Google ADK 1.x's agent span has no attribute: its name names the agent.
    return named or adk_agent_run(span.name)


def system_instructions(span: Span) -> Any:
    """A span's ``gen_ai.system_instructions``: an attribute, or on the details event."""
    if "gen_ai.system_instructions" in span.attributes:
        return span.attributes["gen_ai.system_instructions"]
    for name, attributes in span.events:
        if name == _DETAILS_EVENT and "gen_ai.system_instructions" in attributes:
            return attributes["gen_ai.system_instructions"]
    return None


def value_text(value: Any, *, prompt: bool) -> str | None:
    """An OpenInference ``input.value`` / ``output.value`` as the text of a prompt or reply:
    text as written (a JSON string decoded); a prompt written as the arguments of smolagents'
    ``MultiStepAgent.run`` (openinference-instrumentation-smolagents ``_RunWrapper``: JSON of
    ``{"task", "stream", "reset", …}``) its ``task``; other JSON as written, never dropped.

    >>> value_text('{"task": "add 1 and 2", "stream": false}', prompt=True)
    'add 1 and 2'
    >>> value_text("11", prompt=False)
    '11'
    """
    if not isinstance(value, str) or not value:
        return None
    decoded = json_value(value)
    if isinstance(decoded, str):
        return decoded or None
    if isinstance(decoded, MAPPINGS):
        adk = _adk_content_text(decoded.get("new_message" if prompt else "content"))
        if adk is not None and (prompt or "author" in decoded or "invocation_id" in decoded):
            return adk
    task = decoded.get("task") if prompt and isinstance(decoded, MAPPINGS) else None
    return task if isinstance(task, str) else value


def _adk_content_text(content: Any) -> str | None:
    """The text of a Gemini content as Google ADK's OpenInference instrumentor writes it
    around a run (openinference-instrumentation-google-adk ``_wrappers.py``): the ``CHAIN``
    span's input is ``Runner.run_async``'s arguments as JSON (``{"user_id", "session_id",
    "new_message": <Content>, …}``), the ``CHAIN`` and ``AGENT`` spans' output the final
    ``Event`` (``{"content": <Content>, "author", "invocation_id", "actions", …}``). Its
    text parts, the model's thoughts left out (its model span shows them); None where it has
    none (then the value is shown as written)."""
    if not isinstance(content, MAPPINGS) or not isinstance(content.get("parts"), list):
        return None
    texts = [
        p["text"]
        for p in content["parts"]
        if isinstance(p, MAPPINGS) and isinstance(p.get("text"), str) and not p.get("thought")
    ]
    return "".join(texts) or None


def agent_span_name(span: Span) -> str:
    """The name of an agent that its span's attributes do not name, from the span's name:
    ``invoke_agent {name}`` or ``invoke_workflow {name}`` (GenAI), ``{name}.run``
    (OpenInference's smolagents instrumentor, ``_RunWrapper``, whose spans carry
    ``smolagents.*`` attributes)."""
    name = span.name.removeprefix("invoke_agent ").removeprefix("invoke_workflow ")
    if is_smolagents(span):
        name = name.removesuffix(".run")
    return name
