"""An observation's input and output put back as the span attributes Langfuse read them from
(spec H-4), so that the OTLP reader's rules for each convention read a Langfuse export as they
read the spans themselves.

Langfuse reads an observation's ``input`` and ``output`` from the span's attributes, by the
first convention that has them (``extractInputAndOutput`` in
``packages/shared/src/server/otel/OtelIngestionProcessor.ts``), and since 14 October 2025
(langfuse/langfuse#9707) takes every such attribute out of the ``metadata.attributes`` it keeps,
whichever convention it read: OpenInference's ``input.value`` / ``output.value`` and its
flattened ``llm.input_messages.*`` / ``llm.output_messages.*``, OpenLLMetry's ``gen_ai.prompt.*``
/ ``gen_ai.completion.*``, the GenAI messages and tool arguments and results, the Vercel AI
SDK's ``ai.*`` values, pydantic-ai's. :func:`restore` puts back what the span's convention
reads where the attributes no longer hold it:

- flattened keys (``gen_ai.prompt.0.content``, ``llm.input_messages.0.message.role``) Langfuse
  made one nested value of (``convertKeyPathToNestedObject``: ``[{"content": …}]``) are made
  keys again (:func:`flattened`);
- an OpenInference model span keeps only ``input.value`` / ``output.value`` of its call, the
  request and the response as its client has them (the messages flattened beside them are
  gone): the messages are read from them (:func:`request_messages`, :func:`response_messages`:
  OpenAI Chat Completions and Responses, Anthropic Messages, Google GenAI and ADK, a completion
  prompt) as GenAI input and output messages. A completion call that records its prompts as
  ``llm.prompts`` (llama_index's ``complete``), and Gemini's role ``model``, are read as the
  OTLP reader reads them in any trace (:func:`.messages.completion_prompts`,
  :func:`.messages._openinference`);
- OpenLLMetry's prompt and completion as Langfuse made them (``[{role, content, tool_calls:
  [{id, name, arguments}]}]``) are GenAI messages of Chat Completions shape; Koog's calls and
  results in them are read as in its spans (:func:`.messages.koog_messages`);
- LangSmith's OTel exporter writes a run's inputs and outputs as JSON text (``gen_ai.prompt``
  / ``gen_ai.completion``): its Claude Agent SDK integration's model turns are Anthropic
  messages (``tool_use`` blocks the turn's calls, :func:`langsmith_messages`), its tool runs
  ``{"input": <arguments>}`` and the tool's response, and its run of the conversation (a
  ``chain`` given the prompt and the system prompt) the agent's run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from turnfold import codec
from turnfold.formats.common import MAPPINGS, NameSet, as_list
from turnfold.formats.gemini_parts import as_parts
from turnfold.formats.traces.messages import koog_messages
from turnfold.formats.traces.spans import (
    ADK_LLM_REQUEST,
    ADK_LLM_RESPONSE,
    ADK_TOOL_ARGUMENTS,
    ADK_TOOL_RESPONSE,
    Warn,
    json_value,
)

#: Where pydantic-ai's older instrumentation writes its GenAI events, and where Langfuse read
#: them as the observation's input and output.
EVENTS = "events"
_AI_SDK_INPUTS = ("ai.prompt.messages", "ai.prompt")
_AI_SDK_OUTPUTS = (
    "ai.response.text",
    "ai.response.toolCalls",
    "ai.response.object",
    "ai.result.text",
    "ai.result.toolCalls",
    "ai.result.object",
)
_INPUT_MESSAGES = "llm.input_messages"
_OUTPUT_MESSAGES = "llm.output_messages"
#: A completion call's prompts (llama_index's), kept by Langfuse: the OTLP reader reads them
#: and the call's ``output.value`` (:func:`.messages.completion_prompts`).
_PROMPTS = "llm.prompts"
#: The instrumentation scopes whose spans are read as their tracers write them.
_KOOG = "ai.koog"
_LANGSMITH = "langsmith"
#: Google ADK's own tracer.
_ADK = "gcp.vertex.agent"
#: The inputs LangSmith's Claude Agent SDK integration gives its run of a conversation.
_CLAUDE_CONVERSATION = frozenset({"prompt", "system"})
#: Anthropic content blocks no Chat Completions message holds: a message with one is read as
#: Anthropic's (:func:`_anthropic_message`).
_ANTHROPIC_BLOCKS = NameSet(
    {"tool_use", "server_tool_use", "tool_result", "thinking", "redacted_thinking"}
)
#: The OpenAI Responses API's item types that are no message (``input`` / ``output`` lists).
_RESPONSES_CALLS = NameSet({"function_call", "custom_tool_call"})
_RESPONSES_OUTPUTS = NameSet({"function_call_output", "custom_tool_call_output"})
_RESPONSES_TEXTS = NameSet({"input_text", "output_text", "text", "refusal"})
_RESPONSES_PARTS = NameSet({"input_text", "output_text", "input_image", "input_file"})


def text_value(value: Any) -> str:
    """A value as an OTel attribute holds it: text, structured values as JSON text."""
    return value if isinstance(value, str) else codec.dumps(value, default=str)


def put_first(a: dict[str, Any], keys: tuple[str, ...], value: Any) -> None:
    """``value`` as the first of ``keys`` where ``a`` holds none of them."""
    if value is not None and not any(k in a for k in keys):
        a[keys[0]] = text_value(value)


def events_list(value: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """pydantic-ai's GenAI events written as one list (``event.name`` in each), as span
    events; None where ``value`` is no such list."""
    items = json_value(value)
    items = [items] if isinstance(items, MAPPINGS) else items
    if not isinstance(items, list) or not items:
        return None
    events = []
    for item in items:
        if not isinstance(item, MAPPINGS) or not isinstance(item.get("event.name"), str):
            return None
        events.append((item["event.name"], {k: v for k, v in item.items() if k != "event.name"}))
    return events


def restore(a: dict[str, Any], scope: str, inp: Any, out: Any, warn: Warn) -> None:
    """Put back into the span's attributes ``a`` what Langfuse moved into the observation's
    input and output, under the key of the span's convention, where the span holds none of
    that convention's keys (an export of before the move holds them all). ``warn``: said of
    an input or output that is no message where the convention has messages."""
    if inp is None and out is None:
        return
    if scope == "ai":  # the Vercel AI SDK (Langfuse reads it by its scope's name)
        _ai_sdk(a, inp, out)
        return
    op = a.get("gen_ai.operation.name")
    if scope == _ADK and (op == "execute_tool" or not op):
        _adk(a, op, inp, out)
        return
    if scope == _LANGSMITH:
        _langsmith(a, op, inp, out, warn)
        return
    if EVENTS not in a and scope == "pydantic-ai":
        events = events_list(inp)
        if events is not None:  # its older event mode: the events, then the choice
            listed = events + (events_list(out) or [])
            a[EVENTS] = text_value([{"event.name": n, **e} for n, e in listed])
            return
    tool = op == "execute_tool" or "gen_ai.tool.name" in a
    if tool and "tool_arguments" not in a and ADK_TOOL_ARGUMENTS not in a:
        put_first(a, ("gen_ai.tool.call.arguments", "input.value"), inp)
        put_first(a, ("gen_ai.tool.call.result", "output.value", "tool_response"), out)
        return
    if scope == "pydantic-ai" and "gen_ai.agent.name" in a and not op:
        put_first(a, ("pydantic_ai.all_messages", "all_messages_events"), inp)
        put_first(a, ("final_result",), out)
        return
    if "openinference.span.kind" in a:
        _openinference(a, inp, out)
        return
    if isinstance(op, str) and op:
        _genai(a, inp, out, koog=scope == _KOOG)


def _adk(a: dict[str, Any], op: Any, inp: Any, out: Any) -> None:
    """A tool span or a ``call_llm`` span (which names no operation) of Google ADK's own
    tracer: Langfuse read the call's request and response, the tool's arguments and result,
    as the input and output (``extractInputAndOutput``: ``llm_request``, else, where it is
    ``"{}"`` as on a tool span, ``tool_call_args``; the same for the output). Put back under
    ADK's keys, they read as in the spans themselves (:mod:`.adk_spans`,
    :func:`.messages.tool_response`); a tool's of ADK's schema 2 (``gen_ai.tool.call.*``,
    the same JSON) alike. ADK's other spans (schema 2's ``generate_content``) are GenAI's."""
    if op == "execute_tool":
        put_first(a, (ADK_TOOL_ARGUMENTS,), inp)
        put_first(a, (ADK_TOOL_RESPONSE,), out)
    else:
        put_first(a, (ADK_LLM_REQUEST,), inp)
        put_first(a, (ADK_LLM_RESPONSE,), out)


def _ai_sdk(a: dict[str, Any], inp: Any, out: Any) -> None:
    if a.get("ai.operationId") == "ai.toolCall":
        put_first(a, ("ai.toolCall.args",), inp)
        put_first(a, ("ai.toolCall.result",), out)
        return
    if not any(k in a for k in _AI_SDK_INPUTS) and inp is not None:
        a["ai.prompt.messages" if isinstance(inp, list) else "ai.prompt"] = text_value(inp)
    if not any(k in a for k in _AI_SDK_OUTPUTS) and out is not None:
        if isinstance(out, MAPPINGS) and out.get("role") == "assistant" and "tool_calls" in out:
            a["ai.response.text"] = text_value(out.get("content") or "")
            a["ai.response.toolCalls"] = text_value(out.get("tool_calls"))
        elif isinstance(out, list):
            a["ai.response.toolCalls"] = text_value(out)
        elif isinstance(out, str):
            a["ai.response.text"] = out
        else:
            a["ai.response.object"] = text_value(out)


def _genai(a: dict[str, Any], inp: Any, out: Any, *, koog: bool) -> None:
    """A span of a GenAI operation: its messages as ``gen_ai.input.messages`` /
    ``gen_ai.output.messages``, whether Langfuse read them there, from OpenLLMetry's
    flattened prompt and completion (whose keys it took out too), or from Google ADK's
    ``gcp.vertex.agent.llm_request`` / ``llm_response`` (a request and a response: their
    messages)."""
    if "gen_ai.input.messages" not in a:
        messages, system = _split_system(_chat_list(inp, koog=koog))
        if isinstance(messages, MAPPINGS):  # a request, as Google ADK's tracer writes it
            messages, system = request_messages(messages)
        if messages is not None:
            a["gen_ai.input.messages"] = text_value(messages)
        if system is not None and "gen_ai.system_instructions" not in a:
            a["gen_ai.system_instructions"] = text_value([{"type": "text", "content": system}])
    replies = _chat_list(out, koog=koog)
    if isinstance(replies, MAPPINGS):  # a response (ADK's ``LlmResponse``)
        replies = response_messages(replies)
    put_first(a, ("gen_ai.output.messages",), replies)


def _chat_list(value: Any, *, koog: bool) -> Any:
    """Messages as Langfuse rebuilt them from OpenLLMetry's flattened ``gen_ai.prompt.N.*``
    (its tool calls ``{id, name, arguments}``) in Chat Completions shape, Koog's
    (:func:`koog_messages`) as Koog means them; any other value as it is."""
    value = json_value(value)
    if not isinstance(value, list) or not all(_is_chat(m) for m in value if m is not None):
        return value
    messages = [dict(m) for m in value if m is not None]  # a slot Langfuse left empty: null
    for message in messages:
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            message["tool_calls"] = [_chat_call(c) for c in calls if isinstance(c, MAPPINGS)]
    return koog_messages(messages) if koog else messages


def _is_chat(message: Any) -> bool:
    return isinstance(message, MAPPINGS) and "parts" not in message and "role" in message


def _chat_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call in Chat Completions shape, from OpenLLMetry's ``{id, name, arguments}``."""
    if isinstance(call.get("function"), MAPPINGS):
        return dict(call)
    function = {"name": call.get("name"), "arguments": call.get("arguments")}
    return {"id": call.get("id"), "type": "function", "function": function}


def _split_system(messages: Any) -> tuple[Any, str | None]:
    """GenAI input messages without the system message Langfuse put first from
    ``gen_ai.system_instructions`` (``prependSystemInstructions``: a ``{role, content}`` with
    no parts, before messages of parts), and that message's text."""
    if (
        isinstance(messages, list)
        and len(messages) > 1
        and isinstance(first := messages[0], MAPPINGS)
        and set(first) == {"role", "content"}
        and first["role"] == "system"
        and isinstance(first["content"], str)
        and all(isinstance(m, MAPPINGS) and "parts" in m for m in messages[1:])
    ):
        return messages[1:], first["content"]
    return messages, None


# --- flattened keys ---------------------------------------------------------------------------


def flattened(prefix: str, value: Any) -> dict[str, Any]:
    """A nested value as the flattened attributes Langfuse made it of
    (``convertKeyPathToNestedObject``): a key per leaf, its path joined by dots, a list's
    items by their index (a null item, a slot Langfuse left empty, is no key).

    >>> flattened("llm.input_messages", [{"message": {"role": "user", "content": "hi"}}])
    {'llm.input_messages.0.message.role': 'user', 'llm.input_messages.0.message.content': 'hi'}
    """
    return dict(_leaves(prefix, value))


def _leaves(path: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, MAPPINGS):
        for key, item in value.items():
            yield from _leaves(f"{path}.{key}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(f"{path}.{index}", item)
    elif value is not None:
        yield path, value


def _is_indexed(value: Any) -> bool:
    """OpenInference's flattened messages as Langfuse nests them: ``[{"message": {…}}]``."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            m is None or (isinstance(m, MAPPINGS) and isinstance(m.get("message"), MAPPINGS))
            for m in value
        )
    )


# --- OpenInference ----------------------------------------------------------------------------


def _openinference(a: dict[str, Any], inp: Any, out: Any) -> None:
    """An OpenInference span: its flattened messages put back where Langfuse nested them,
    else ``input.value`` / ``output.value``; a model span's messages read from them where it
    holds no flattened messages (an export since the move, or a completion call)."""
    for prefix, value, key in ((_INPUT_MESSAGES, inp, "input.value"),
                               (_OUTPUT_MESSAGES, out, "output.value")):  # fmt: skip
        if any(k.startswith(prefix + ".") for k in a):
            continue
        if _is_indexed(json_value(value)):
            a.update(flattened(prefix, json_value(value)))
        else:
            put_first(a, (key,), value)
    if a.get("openinference.span.kind") != "LLM" or _PROMPTS in a:
        return
    if not any(k.startswith(_INPUT_MESSAGES + ".") for k in a) and "gen_ai.input.messages" not in a:
        messages, system = request_messages(a.get("input.value"))
        # The Responses API's instructions are in its response, not in the items it was given.
        system = system or _system_text(_mapping(a.get("output.value")))
        if messages is not None:
            a["gen_ai.input.messages"] = text_value(messages)
        if system and "gen_ai.system_instructions" not in a:
            a["gen_ai.system_instructions"] = system
    if not any(k.startswith(_OUTPUT_MESSAGES + ".") for k in a):
        replies = response_messages(a.get("output.value"))
        if replies is not None and "gen_ai.output.messages" not in a:
            a["gen_ai.output.messages"] = text_value(replies)


def _mapping(value: Any) -> Mapping[str, Any]:
    decoded = json_value(value)
    return decoded if isinstance(decoded, MAPPINGS) else {}


def request_messages(value: Any) -> tuple[list[Any] | None, str | None]:
    """A model call's request as its client has it (OpenInference's ``input.value``) as
    messages and its system prompt: OpenAI Chat Completions' and Anthropic's ``messages``,
    the Responses API's ``input`` (or its items alone, as the OpenAI Agents instrumentor
    writes them), Google GenAI's and ADK's ``contents`` and a completion's ``prompt``; None
    for any other value.

    >>> request_messages('{"model": "gemini-2.5-flash", "contents": "What is Langfuse?"}')
    ([{'role': 'user', 'parts': [{'text': 'What is Langfuse?'}]}], None)
    """
    value = json_value(value)
    if isinstance(value, list):
        return _items(value), None
    if not isinstance(value, MAPPINGS):
        return None, None
    system = _system_text(value)
    for key in ("messages", "input"):
        listed = value.get(key)
        if isinstance(listed, list) and listed and all(isinstance(m, MAPPINGS) for m in listed):
            return _items(listed), system
        if key == "input" and isinstance(listed, str) and listed:
            return [{"role": "user", "content": listed}], system
    contents = value.get("contents")
    if contents is not None:
        return _gemini_contents(contents), system
    prompt = value.get("prompt")
    if isinstance(prompt, str) and prompt:
        return [{"role": "user", "content": prompt}], system
    return None, None


def response_messages(value: Any) -> list[Any] | None:
    """A model call's response as its client has it (OpenInference's ``output.value``) as
    messages: Chat Completions' ``choices``, Google GenAI's ``candidates`` (the first), an
    ADK ``LlmResponse``'s ``content``, a Responses API response's ``output``, an Anthropic
    message, or text; None for any other value.

    >>> response_messages('{"choices": [{"message": {"role": "assistant", "content": "Hi."}}]}')
    [{'role': 'assistant', 'content': 'Hi.'}]
    """
    value = json_value(value)
    if isinstance(value, str):
        return [{"role": "assistant", "content": value}] if value else None
    if isinstance(value, list):
        return _items(value) if all(isinstance(m, MAPPINGS) for m in value) else None
    if not isinstance(value, MAPPINGS):
        return None
    choices = value.get("choices")
    if isinstance(choices, list) and choices:
        replies = []
        for choice in choices[:1]:  # the one shown: n > 1 asks for alternatives
            message = choice.get("message") if isinstance(choice, MAPPINGS) else None
            if isinstance(message, MAPPINGS):
                replies += _items([message])
            elif isinstance(choice, MAPPINGS) and isinstance(choice.get("text"), str):
                replies.append({"role": "assistant", "content": choice["text"]})
        return replies or None
    candidates = value.get("candidates")
    if isinstance(candidates, list) and candidates:
        first = candidates[0]
        content = first.get("content") if isinstance(first, MAPPINGS) else None
        return [_gemini_content(content)] if isinstance(content, MAPPINGS) else None
    content = value.get("content")
    if isinstance(content, MAPPINGS) and "parts" in content:  # ADK's LlmResponse
        return [_gemini_content(content)]
    output = value.get("output")
    if isinstance(output, list) and value.get("object") == "response":
        return _items([o for o in output if isinstance(o, MAPPINGS)])
    if value.get("role") == "assistant" or value.get("type") == "message":
        return _items([value])
    return None


def _system_text(request: Mapping[str, Any]) -> str | None:
    """A request's system prompt: Anthropic's ``system``, the Responses API's
    ``instructions``, Google's ``system_instruction`` (in its ``config``, or the REST
    ``systemInstruction``)."""
    config = request.get("config")
    config = config if isinstance(config, MAPPINGS) else {}
    for value in (
        request.get("system"),
        request.get("instructions"),
        config.get("system_instruction"),
        request.get("systemInstruction"),
    ):
        if isinstance(value, MAPPINGS):
            value = value.get("parts", value.get("text"))
        if isinstance(value, str) and value:
            return value
        texts = [p.get("text") for p in as_list(value) if isinstance(p, MAPPINGS)]
        texts += [p for p in as_list(value) if isinstance(p, str)]
        if any(isinstance(t, str) and t for t in texts):
            return "\n\n".join(t for t in texts if isinstance(t, str) and t)
    return None


def _gemini_contents(contents: Any) -> list[Any]:
    """Google's ``contents`` (a ``ContentListUnion``: a text, a content, parts, or a list of
    contents) as Gemini contents, a text or parts the user's."""
    if isinstance(contents, list) and all(
        isinstance(c, MAPPINGS) and "parts" in c for c in contents
    ):
        return [_gemini_content(c) for c in contents]
    if isinstance(contents, MAPPINGS) and "parts" in contents:
        return [_gemini_content(contents)]
    return [{"role": "user", "parts": as_parts(contents)}]


def _gemini_content(content: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini content with its role (the user's where none is written) and its parts as a
    list."""
    role = content.get("role")
    return {"role": role if isinstance(role, str) and role else "user",
            "parts": as_parts(content.get("parts"))}  # fmt: skip


def _items(items: list[Any]) -> list[Any]:
    """Chat Completions messages, Anthropic messages, Gemini contents or Responses API items
    as messages the OTLP reader reads (Chat messages and GenAI messages of parts)."""
    out: list[Any] = []
    for item in items:
        if not isinstance(item, MAPPINGS):
            continue
        kind = item.get("type")
        if kind in _RESPONSES_CALLS:
            arguments = item.get("arguments", item.get("input"))
            out.append({"role": "assistant", "parts": [
                {"type": "tool_call", "id": item.get("call_id"), "name": item.get("name"),
                 "arguments": arguments},
            ]})  # fmt: skip
        elif kind in _RESPONSES_OUTPUTS:
            out.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": item.get("call_id"),
                 "response": item.get("output")},
            ]})  # fmt: skip
        elif kind == "reasoning":
            texts = [s.get("text") for s in as_list(item.get("summary")) if isinstance(s, MAPPINGS)]
            text = "\n\n".join(t for t in texts if isinstance(t, str) and t)
            if text:
                out.append({"role": "assistant", "parts": [{"type": "reasoning", "content": text}]})
        elif "parts" in item:
            out.append(_gemini_content(item) if "role" not in item else dict(item))
        elif _is_anthropic(item):
            out.append(_anthropic_message(item))
        elif _is_responses_message(item):
            out.append(_responses_message(item))
        else:
            out.append(dict(item))
    return out


def _is_anthropic(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, MAPPINGS)
        and (b.get("type") in _ANTHROPIC_BLOCKS or (b.get("type") == "image" and "source" in b))
        for b in content
    )


def _anthropic_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """An Anthropic message (``{role, content: [blocks]}``) as a GenAI message of parts: text,
    thinking as reasoning, ``tool_use`` a call, ``tool_result`` the response to one (failed
    where ``is_error``), a base64 image a blob; other blocks by their type."""
    parts: list[Any] = []
    for block in message.get("content") or ():
        kind = block.get("type") if isinstance(block, MAPPINGS) else None
        if not isinstance(block, MAPPINGS):
            parts.append(block)
        elif kind == "text":
            parts.append({"type": "text", "content": block.get("text")})
        elif kind == "thinking":
            parts.append({"type": "reasoning", "content": block.get("thinking")})
        elif kind in ("tool_use", "server_tool_use"):
            parts.append({"type": "tool_call", "id": block.get("id"), "name": block.get("name"),
                          "arguments": block.get("input")})  # fmt: skip
        elif kind == "tool_result":
            response = {"type": "tool_call_response", "id": block.get("tool_use_id"),
                        "response": block.get("content")}  # fmt: skip
            parts.append({**response, "status": "error"} if block.get("is_error") else response)
        elif kind == "image" and isinstance(source := block.get("source"), MAPPINGS):
            parts.append({"type": "blob", "modality": "image", "content": source.get("data"),
                          "mime_type": source.get("media_type")})  # fmt: skip
        else:
            parts.append(dict(block))
    role = message.get("role")
    return {"role": role if isinstance(role, str) else "assistant", "parts": parts}


def _is_responses_message(item: Mapping[str, Any]) -> bool:
    """A Responses API message item: typed so, or of its content parts (``input_text``…), not
    a Chat Completions message (whose parts the Chat reader reads as they are)."""
    content = item.get("content")
    return isinstance(content, list) and (
        item.get("type") == "message"
        or any(isinstance(p, MAPPINGS) and p.get("type") in _RESPONSES_PARTS for p in content)
    )


def _responses_message(item: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses API message item (``{role, content: [{type: input_text | output_text,
    text}]}``) as a GenAI message of text parts; other content parts by their type."""
    parts: list[Any] = []
    for part in item.get("content") or ():
        if isinstance(part, MAPPINGS) and part.get("type") in _RESPONSES_TEXTS:
            text = part.get("text", part.get("refusal"))
            parts.append({"type": "text", "content": text})
        elif isinstance(part, MAPPINGS) and isinstance(part.get("image_url"), str):
            parts.append({"type": "uri", "uri": part["image_url"], "modality": "image"})
        else:
            parts.append(part)
    role = item.get("role")
    return {"role": role if isinstance(role, str) else "assistant", "parts": parts}


# --- LangSmith --------------------------------------------------------------------------------


def _langsmith(a: dict[str, Any], op: Any, inp: Any, out: Any, warn: Warn) -> None:
    """A span LangSmith's OTel exporter wrote of a run (``_otel_exporter.py``,
    ``_set_io_attributes``: the run's inputs and outputs as ``gen_ai.prompt`` /
    ``gen_ai.completion`` JSON text, which Langfuse read whole)."""
    if op == "execute_tool":
        put_first(a, ("gen_ai.tool.call.arguments",), _langsmith_arguments(inp))
        put_first(a, ("gen_ai.tool.call.result",), _langsmith_result(out))
        return
    given = json_value(inp)
    if op == "chain" and isinstance(given, MAPPINGS) and given.keys() <= _CLAUDE_CONVERSATION:
        # The Claude Agent SDK integration's run of a conversation (``_client.py``: its
        # ``trace_inputs``, the prompt and the system prompt): the agent's run.
        a["gen_ai.operation.name"] = "invoke_agent"
        put_first(a, ("input.value",), given.get("prompt"))
        put_first(a, ("gen_ai.system_instructions",), given.get("system"))
        replies = langsmith_messages(out) or []
        texts = [m.get("content") for m in _chat_texts(replies)]
        put_first(a, ("output.value",), "\n\n".join(t for t in texts if t) or None)
        return
    if op != "chat":
        return
    for value, key, said in ((inp, "gen_ai.input.messages", "input"),
                             (out, "gen_ai.output.messages", "output")):  # fmt: skip
        if value is None or key in a:
            continue
        messages = langsmith_messages(value)
        if messages is None:
            warn(f"its {said} is no message list ({text_value(value)[:80]}): what it holds "
                 f"is not shown")  # fmt: skip
        else:
            a[key] = text_value(messages)


def _chat_texts(messages: list[Any]) -> list[dict[str, Any]]:
    """The text parts of GenAI messages, each as a Chat message of its text."""
    return [
        {"role": m.get("role"), "content": p.get("content")}
        for m in messages
        if isinstance(m, MAPPINGS)
        for p in as_list(m.get("parts"))
        if isinstance(p, MAPPINGS) and p.get("type") == "text"
    ]


def langsmith_messages(value: Any) -> list[Any] | None:
    """A LangSmith model run's inputs or outputs as messages: a message (the Claude Agent SDK
    integration's first turn and its replies, ``{"content": [blocks], "role": "assistant"}``),
    several (``{"content": [messages]}``), ``{"messages": [...]}`` or a list of messages;
    None for anything else (the integration writes a later turn's history as
    ``inputs=dict(history)``, which keeps nothing of it: ``{"content": "role"}``).

    >>> langsmith_messages({"content": [{"type": "tool_use", "id": "t1", "name": "ls",
    ...                                  "input": {}}], "role": "assistant"})
    [{'role': 'assistant', 'parts': [{'type': 'tool_call', 'id': 't1', 'name': 'ls', \
'arguments': {}}]}]
    >>> langsmith_messages({"content": "role"}) is None
    True
    """
    value = json_value(value)
    if isinstance(value, MAPPINGS) and isinstance(value.get("role"), str):
        value = [value]
    elif isinstance(value, MAPPINGS):
        listed = value.get("messages", value.get("content"))
        value = listed if isinstance(listed, list) else None
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(m, MAPPINGS) and isinstance(m.get("role"), str) for m in value):
        return None
    return _items(value)


def _langsmith_arguments(value: Any) -> Any:
    """A tool run's arguments: the Claude Agent SDK integration's ``PreToolUse`` hook writes
    ``{"input": <the tool's input>}`` (``integrations/claude_agent_sdk/_hooks.py``)."""
    value = json_value(value)
    if isinstance(value, MAPPINGS) and set(value) == {"input"}:
        return value["input"]
    return value


def _langsmith_result(value: Any) -> Any:
    """A tool run's outputs as the tool's result: the ``PostToolUse`` hook writes the tool's
    response (an MCP tool's ``{"content": [blocks]}``), a list as ``{"content": list}``,
    anything else as ``{"output": str(response)}``."""
    value = json_value(value)
    if isinstance(value, MAPPINGS) and set(value) <= {"content", "is_error", "isError"}:
        return value.get("content")
    if isinstance(value, MAPPINGS) and set(value) == {"output"}:
        return value["output"]
    return value
