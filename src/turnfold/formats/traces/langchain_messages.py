"""LangChain's messages as the trace readers' Chat messages (spec H-4): what a tracer wrote of
LangChain's own message objects, in the trace readers' one shape (Chat Completions messages
and the private keys of :mod:`.chat_keys`).

A message's content is read by the rule every LangChain reader follows
(:mod:`~turnfold.formats.langchain_blocks`): an AI message's thinking, text, calls, server
tools and garbled calls (:func:`langchain_reply`), a prompt's or a tool's text and images
(:func:`langchain_message`). Two tracers write such messages:

- MLflow's LangChain autolog (:mod:`.mlflow`), its messages as ``model_dump`` fields;
- OpenInference's LangChain instrumentor (``openinference-instrumentation-langchain``,
  ``_tracer.py``), whose span's ``input.value`` / ``output.value`` are the LangChain
  callback's run inputs and outputs as JSON (``_convert_io``): a chat model's
  ``{"messages": [[<dumpd of each message>]]}`` (``LangChainTracer.on_chat_model_start``)
  and its ``LLMResult`` (``{"generations": [[{"text", "message": <dumpd>}]], …}``), a graph's
  ``{"messages": [...]}``, a tool's ``ToolMessage`` (``message_to_dict``'s ``{"type",
  "data"}``). It flattens the messages beside them (``llm.input_messages.*``), which
  ``TraceConfig(hide_input_messages=True)`` (``OPENINFERENCE_HIDE_INPUT_MESSAGES``) and
  ``hide_output_messages`` drop: then :func:`run_input_messages` and
  :func:`run_output_messages` read the messages the instrumentor would have flattened, by
  its own rule (``_input_messages``, ``_output_messages``), from the values it keeps.

A message in any form LangChain serializes one to (``dumpd``'s ``{"lc": 1, "type":
"constructor", "id": [..., class], "kwargs": fields}``, ``messages_to_dict``'s
``{"type", "data"}``, ``model_dump``'s fields) is decoded by the LangChain reader's
:func:`~turnfold.formats.frameworks.langchain.message_of`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from turnfold import codec
from turnfold.formats import langchain_blocks
from turnfold.formats.common import MAPPINGS, as_list
from turnfold.formats.frameworks.langchain import message_of
from turnfold.formats.traces.chat_keys import _FAILED, _IMAGES, _PART, _UNSHOWN
from turnfold.formats.traces.spans import json_value
from turnfold.model import ImageData, Thinking

#: LangChain's message types and the Chat role each is (a ``ChatMessage`` names its own).
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool",
         "function": "function"}  # fmt: skip
#: The roles of a message tuple (langchain_core ``_create_message_from_message_type``).
_TUPLE_ROLES = frozenset({"human", "user", "ai", "assistant", "system", "developer", "tool"})


def strip_none(value: Any) -> Any:
    """A value with its ``None`` fields left out: a response's message as the SDK dumps it
    (``"refusal": null``…) and the same message sent back in the next request
    (``model_dump(exclude_none=True)``) are then one message, seen once."""
    if isinstance(value, MAPPINGS):
        return {k: strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_none(v) for v in value]
    return value


def is_message_tuple(value: Any) -> bool:
    """LangChain's ``("user", "text")`` (a list once written as JSON)."""
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and isinstance(value[0], str)
        and value[0] in _TUPLE_ROLES
        and isinstance(value[1], (str, list))
    )


def chat_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A LangChain ``tool_calls`` item (``{name, args, id}``) as a Chat Completions call."""
    args = call.get("args", {})
    arguments = args if isinstance(args, str) else codec.dumps(args)  # a garbled call's text
    function = {"name": call.get("name"), "arguments": arguments}
    return {"id": call.get("id"), "type": "function", "function": function}


def image_pairs(images: Sequence[ImageData]) -> list[list[str]]:
    return [[image.media_type, image.data or ""] for image in images]


def langchain_message(role: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A human, system or tool message (``fields``: its ``None`` fields left out) as a Chat
    message of ``role``: its content's text and images by the LangChain readers' rule, a
    tool message's call id, an AI message's calls (its content is :func:`langchain_reply`'s
    to read)."""
    content = fields.get("content", "")
    chat: dict[str, Any] = {"role": role, "content": content}
    calls = [c for c in as_list(fields.get("tool_calls")) if isinstance(c, MAPPINGS)]
    if calls:
        chat["tool_calls"] = [chat_call(c) for c in calls]
    if role == "tool" and fields.get("tool_call_id") is not None:
        chat["tool_call_id"] = fields["tool_call_id"]
    if isinstance(content, list) and role != "assistant":
        if role == "tool":
            text, images = langchain_blocks.tool_content(content)
        else:
            text, images, _ = langchain_blocks.prompt(content)
        chat["content"] = text or ""
        if images:
            chat[_IMAGES] = image_pairs(images)
    return chat


def langchain_reply(fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A LangChain AI message as Chat messages, its content read by the LangChain readers' rule
    (:func:`~turnfold.formats.langchain_blocks.ai_content`: reasoning and thinking in any form,
    the text, refusals, images, calls of ``tool_calls`` or of call blocks, each once), in
    order: its thinking, its provider's own tool calls and their results each a message of its
    own (``_PART``, as the OTLP reader's server tool parts), then its text and calls; a garbled
    call (``invalid_tool_calls``) is followed by a failed result saying why it never ran."""
    read = langchain_blocks.ai_content(fields)
    out: list[dict[str, Any]] = []
    reasoning: list[str] = []

    def flush() -> None:
        if reasoning:
            out.append({"role": "assistant", "reasoning_content": "\n\n".join(reasoning)})
            reasoning.clear()

    for item in read.leading:
        if isinstance(item, Thinking) and item.text:
            reasoning.append(item.text)
            continue
        flush()
        if isinstance(item, Thinking):  # no text: redacted, or encrypted (its signature)
            kept = ({"redactedContent": item.data or ""} if item.form == "redacted"
                    else {"reasoningText": {"signature": item.data or ""}})  # fmt: skip
            out.append({"role": "assistant", _PART: {"type": "reasoningContent", "content": kept}})
        else:
            call = langchain_blocks.server_call(item)
            part = {"type": "server_tool_call", "id": call["id"], "name": call["name"],
                    "server_tool_call": call["args"]}  # fmt: skip
            out.append({"role": "assistant", _PART: part})
    for block in read.results:
        call_id, status, result = langchain_blocks.server_outcome(block)
        # The payload server_tool_outcome reads: the result's text, its failure said.
        response: dict[str, Any] = {"type": block.get("type"), "output": result.text or ""}
        if status == "error":
            response["is_error"] = True
        part = {"type": "server_tool_call_response", "id": call_id or None,
                "server_tool_call_response": response}  # fmt: skip
        out.append({"role": "assistant", _PART: part})
    chat: dict[str, Any] = {"role": "assistant", "content": read.text}
    if reasoning:
        chat["reasoning_content"] = "\n\n".join(reasoning)
    calls = [c for c in (*read.calls, *read.invalid) if isinstance(c, MAPPINGS)]
    if calls:
        chat["tool_calls"] = [chat_call(c) for c in calls]
    if read.refusals:
        chat["refusal"] = "\n\n".join(read.refusals)
    if read.images:
        chat[_IMAGES] = image_pairs(read.images)
    if read.unshown:
        chat[_UNSHOWN] = read.unshown
    out.append(chat)
    for bad in read.invalid:
        error = bad.get("error") if isinstance(bad, MAPPINGS) else None
        why = error if isinstance(error, str) and error else "invalid tool call (not run)"
        out.append({"role": "tool", "tool_call_id": bad.get("id") if isinstance(bad, MAPPINGS)
                    else None, "content": why, _FAILED: True})  # fmt: skip
    return out


# --- OpenInference's LangChain spans ---------------------------------------------------------


def _serialized(value: Any) -> list[dict[str, Any]] | None:
    """One serialized LangChain message (any form :func:`message_of` reads, or a message
    tuple) as Chat messages; None for anything else. A ``RemoveMessage`` (LangGraph's mark
    to drop a message of the state) says nothing: no message."""
    if is_message_tuple(value):
        return [{"role": ROLES.get(value[0], value[0]), "content": value[1]}]
    found = message_of(value) if isinstance(value, MAPPINGS) else None
    if found is None:
        return None
    kind, fields = found
    fields = strip_none(fields)
    if kind == "remove":
        return []
    if kind == "ai":
        return langchain_reply(fields)
    role = fields.get("role") if kind == "chat" else ROLES.get(kind)
    return [langchain_message(role if isinstance(role, str) and role else "user", fields)]


def run_input_messages(value: Any) -> list[dict[str, Any]] | None:
    """The messages of a LangChain run's inputs (an OpenInference span's ``input.value``), as
    its instrumentor reads them into ``llm.input_messages`` (``_input_messages``): the first
    element of ``messages`` (a chat model's batch, or a graph's state), a list of messages,
    one message or one ``(role, content)`` tuple. None where the value is no such run input,
    or holds anything that is no LangChain message (another client's request: its own
    readers' to read).

    >>> run_input_messages('{"messages": [[{"lc": 1, "type": "constructor", "id": '
    ...     '["langchain", "schema", "messages", "HumanMessage"], '
    ...     '"kwargs": {"content": "hi", "type": "human"}}]]}')
    [{'role': 'user', 'content': 'hi'}]
    """
    if isinstance(value, str) and '"messages"' not in value:
        return None  # most values are no run's inputs: not decoded
    decoded = json_value(value)
    listed = decoded.get("messages") if isinstance(decoded, MAPPINGS) else None
    if not isinstance(listed, list) or not listed:
        return None
    first = listed[0]
    batch = first if isinstance(first, list) and not is_message_tuple(first) else [first]
    out: list[dict[str, Any]] = []
    for message in batch:
        chats = _serialized(message)
        if chats is None:
            return None
        out += chats
    return out


def _llm_result(value: Any) -> tuple[Mapping[str, Any], list[Any]] | None:
    """A LangChain ``LLMResult`` (an OpenInference span's ``output.value``, as JSON or
    decoded) and its ``generations``, a list per prompt; None where the value is none (a
    string is looked into only when it names ``generations``)."""
    if isinstance(value, str) and '"generations"' not in value:
        return None
    decoded = json_value(value)
    generations = decoded.get("generations") if isinstance(decoded, MAPPINGS) else None
    if not isinstance(generations, list) or not generations:
        return None
    return decoded, generations


def run_output_messages(value: Any) -> list[dict[str, Any]] | None:
    """The reply of a LangChain model run's outputs (an OpenInference span's
    ``output.value``, the ``LLMResult``), as its instrumentor reads them into
    ``llm.output_messages`` (``_output_messages``): the message of each generation of the
    first prompt's; a completion model's generation, which has no message, its ``text``. None
    where the value is no ``LLMResult``."""
    result = _llm_result(value)
    if result is None:
        return None
    _, generations = result
    out: list[dict[str, Any]] = []
    for generation in as_list(generations[0]):
        if not isinstance(generation, MAPPINGS):
            return None
        message = generation.get("message")
        if message is not None:
            chats = _serialized(message)
            if chats is None:
                return None
            out += chats
        elif isinstance(generation.get("text"), str):
            out.append({"role": "assistant", "content": generation["text"]})
        else:
            return None
    return out


#: Where LangChain says which model answered: a chat model's ``response_metadata`` (and a
#: model's ``llm_output``) name it ``model_name`` (OpenAI's, Gemini's, the fakes') or ``model``
#: (Anthropic's, Ollama's), the keys OpenInference's instrumentor reads too (``_model_name``).
_MODEL_KEYS = ("model_name", "model")


def _named_model(metadata: Any) -> str | None:
    if not isinstance(metadata, MAPPINGS):
        return None
    return next((m.strip() for k in _MODEL_KEYS if isinstance(m := metadata.get(k), str)
                 and m.strip()), None)  # fmt: skip


def run_output_model(value: Any) -> str | None:
    """The model that answered a LangChain model run, from its outputs (an OpenInference span's
    ``output.value``, the ``LLMResult``): its ``llm_output``'s model, else that of the
    ``response_metadata`` of the first generation's message that names one. OpenInference's
    LangChain instrumentor writes ``llm.model_name`` only from ``llm_output``, the run's
    ``ls_model_name`` metadata or its invocation parameters (``_model_name`` in
    ``_tracer.py``), none of which a chat model need fill: the response's own metadata is
    where it says which model answered. None where the value is no ``LLMResult`` or names no
    model.

    >>> run_output_model('{"generations": [[{"text": "hi", "message": {"lc": 1, "type": '
    ...     '"constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": '
    ...     '{"content": "hi", "response_metadata": {"model_name": "gpt-5"}}}}]]}')
    'gpt-5'
    """
    result = _llm_result(value)
    if result is None:
        return None
    decoded, generations = result
    named = _named_model(decoded.get("llm_output"))
    if named is not None:
        return named
    for generation in as_list(generations[0]):
        message = generation.get("message") if isinstance(generation, MAPPINGS) else None
        found = message_of(message) if isinstance(message, MAPPINGS) else None
        named = _named_model(found[1].get("response_metadata")) if found is not None else None
        if named is not None:
            return named
    return None


def tool_message(value: Any) -> Mapping[str, Any] | None:
    """The fields of a LangChain ``ToolMessage`` written in any serialized form (OpenInference's
    tool span's ``output.value``: ``message_to_dict``'s ``{"type": "tool", "data": {content,
    tool_call_id, status…}}``), else None."""
    decoded = json_value(value)
    found = message_of(decoded) if isinstance(decoded, MAPPINGS) else None
    if found is None or found[0] != "tool":
        return None
    return found[1]
