"""Gemini CLI's own OpenTelemetry spans (spec H-4): what its tracer writes, read with the Gemini
parts reader (:mod:`~turnfold.formats.gemini_parts`) that reads its chat recordings.

Gemini CLI traces itself (google-gemini/gemini-cli ``packages/core/src/telemetry/trace.ts``
``runInDevTraceSpan``, ``constants.ts`` ``GeminiCliOperation``; seen in 0.61.0): a span named
its operation, which ``gen_ai.operation.name`` repeats, every one carrying
``gen_ai.conversation.id`` (the session id) and ``gen_ai.agent.name`` ``gemini-cli``.

- ``llm_call`` (``core/loggingContentGenerator.ts``): a model call. ``gen_ai.input.messages`` is
  the request's ``contents``, Gemini ``Content`` objects (``{role: "user" | "model", parts}``,
  parts without the ``type`` the GenAI schemas give theirs: ``{text}``, ``{text, thought}``,
  ``{functionCall}``, ``{functionResponse}``…); ``gen_ai.output.messages`` the response's
  content, one ``Content`` (``generateContent``) or a list of one per streamed chunk;
  ``gen_ai.usage.input_tokens`` / ``output_tokens`` its ``promptTokenCount`` and
  ``candidatesTokenCount`` (no thoughts count); ``gen_ai.system_instructions`` the system
  prompt as JSON. Read as a GenAI model span, its contents as GenAI messages
  (:func:`gemini_content`), the first prompt's ``<session_context>`` briefing as the notice the
  chat recordings' reader makes of it (:data:`BRIEFING`).
- ``tool_call`` (``scheduler/tool-executor.ts``): a tool's run, its call id in
  ``gen_ai.tool.call_id`` (not the conventions' ``gen_ai.tool.call.id``); its output the
  scheduler's ``CompletedToolCall`` (``{status, request, tool, response: {responseParts,
  resultDisplay, error}, durationMs}``): the status Gemini CLI gave the call and its result
  (:func:`tool_call_outcome`). Its span's status is OK even for a call that failed.
- ``agent_call`` (``agents/``): a sub-agent's run inside the ``invoke_agent`` tool's
  ``tool_call`` span; its input the tool's arguments (``{agent_name, prompt}``). The tracer
  writes ``gen_ai.agent.name`` ``gemini-cli`` over the agent's own name when the span ends:
  the name is the input's (:func:`agent_call_name`).
- ``schedule_tool_calls``: the batch the scheduler ran (its ``tool_call`` spans are read);
  ``user_prompt`` / ``system_prompt``: the interactive UI's turn, written without content.

The tracer cuts every value it writes (input, output, other attributes) at 10,000 characters
and appends ``...[TRUNCATED: original length N]`` (``truncateForTelemetry``): a long history or
result is then no JSON. What was written whole before the cut is read (:func:`cut_json`:
complete messages of a list, complete members of an object), the cut is warned of
(:func:`cut_reasons`), and nothing past it is guessed.

Apart from the conventions every trace may use (:mod:`~turnfold.formats.traces.messages`)
because only one agent writes these shapes, as :mod:`.smolagents_spans` is one framework's.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any

from turnfold.formats.common import MAPPINGS
from turnfold.formats.gemini import is_briefing
from turnfold.formats.gemini_parts import (
    FINAL_STATUSES,
    build_result,
    images_of,
    inline_image,
    response_text,
    rest_part,
)
from turnfold.formats.traces.spans import Span, json_value
from turnfold.model import ToolResult, ToolStatus

#: The part type :func:`gemini_content` gives Gemini CLI's ``<session_context>`` briefing: an
#: entry of its own (the notice :func:`~turnfold.formats.gemini.session_context_notice`
#: makes), not the user's words.
BRIEFING = "gemini_cli.session_context"
#: How ``truncateForTelemetry`` ends a value it cut, and the length the value had.
_CUT = re.compile(r"\.\.\.\[TRUNCATED: original length (\d+)\]\Z")
#: The Gemini ``Part`` fields (REST spelling) that mark a part without a ``type`` as Gemini's.
_GEMINI_FIELDS = frozenset(
    {
        "text",
        "thought",
        "functionCall",
        "functionResponse",
        "inlineData",
        "fileData",
        "executableCode",
        "codeExecutionResult",
        "toolCall",
        "toolResponse",
        "thoughtSignature",
        "videoMetadata",
    }
)
#: Fields that carry nothing to show (as the chat recordings' reader passes them over).
_SILENT_FIELDS = frozenset({"thought", "thoughtSignature", "videoMetadata"})
#: How deep :func:`cut_json` reads: what the tracer writes nests a few levels; a hostile text
#: nested deeper is read no further, before Python's recursion (which the readers of what it
#: gives use) would meet it.
_DEEPEST = 100
#: The span attributes whose values the tracer cuts that the reader reads.
_CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages")


def is_gemini_part(part: Any) -> bool:
    """A Gemini ``Part`` (no ``type``, a field of Gemini's), in either spelling.

    >>> is_gemini_part({"functionCall": {"name": "ls"}}), is_gemini_part({"type": "text"})
    (True, False)
    """
    return (
        isinstance(part, MAPPINGS)
        and "type" not in part
        and bool(rest_part(part).keys() & _GEMINI_FIELDS)
    )


def gemini_messages(messages: list[Any], ids: CallIds | None = None) -> list[Any]:
    """A list of messages with its Gemini ``Content`` objects as GenAI messages
    (:func:`gemini_content`, ``ids`` its calls' ids); a streamed response's chunks one content
    (:func:`merged_chunks`).

    Gemini CLI keeps no thoughts in the history it sends (a model content comes again in the
    next call's input without them): a response's thoughts are a message of their own before
    the rest of it, so that the rest is known as that history when it comes again.

    >>> gemini_messages([{"role": "model", "parts": [{"text": "hm", "thought": True},
    ...                                              {"text": "Done."}]}])
    [{'role': 'assistant', 'parts': [{'type': 'reasoning', 'content': 'hm'}]}, \
{'role': 'assistant', 'parts': [{'type': 'text', 'content': 'Done.'}]}]
    """
    out: list[Any] = []
    for message in merged_chunks(messages):
        parts = message.get("parts") if isinstance(message, MAPPINGS) else None
        if not isinstance(parts, list) or not any(map(is_gemini_part, parts)):
            out.append(message)
            continue
        role, typed = gemini_content(str(message.get("role")), parts, ids)
        thoughts = [p for p in typed if isinstance(p, MAPPINGS) and p.get("type") == "reasoning"]
        rest = [p for p in typed if not (isinstance(p, MAPPINGS) and p.get("type") == "reasoning")]
        if thoughts and rest:
            out.append({"role": role, "parts": thoughts})
            typed = rest
        out.append({"role": role, "parts": typed})
    return out


def gemini_content(
    role: str, parts: list[Any], ids: CallIds | None = None
) -> tuple[str, list[Any]]:
    """A Gemini ``Content``'s role and parts as a GenAI message's: ``model`` is ``assistant``;
    text, thought text, ``functionCall``, ``functionResponse`` (its text and whether it reports
    an error, :func:`~turnfold.formats.gemini_parts.response_text`), ``inlineData`` and
    ``fileData`` as the schemas' ``text``, ``reasoning``, ``tool_call``,
    ``tool_call_response``, ``blob`` and ``uri`` parts; consecutive texts (of thought alike)
    joined, as streamed chunks are (:func:`~turnfold.formats.gemini_parts.model_entries`); the
    ``<session_context>`` briefing a part of its own (:data:`BRIEFING`); a signature alone
    nothing; a part of another kind (``executableCode``…) one of its field's name, shown by
    that name with a warning. Parts that are not Gemini's are left as they are.

    A call's id is the one Gemini CLI gives it (:func:`call_id`), unless ``ids`` says how the
    contents' writer named them (Google ADK's: as the model gave them, :mod:`.adk_spans`).

    >>> gemini_content("model", [{"text": "Let me "}, {"text": "look.", "thoughtSignature": "s"},
    ...                          {"functionCall": {"id": "c1", "name": "ls", "args": {}}}])
    ('assistant', [{'type': 'text', 'content': 'Let me look.'}, {'type': 'tool_call', \
'id': 'ls__c1', 'name': 'ls', 'arguments': {}}])
    """
    typed: list[Any] = []
    for part in parts:
        one = _typed(rest_part(part), ids or call_id) if is_gemini_part(part) else part
        if one is None:
            continue
        last = typed[-1] if typed else None
        joins = (
            is_gemini_part(part)
            and isinstance(last, dict)
            and last.get("type") == one["type"]
            and one["type"] in ("text", "reasoning")
        )
        if joins:
            last["content"] += one["content"]  # type: ignore[index]
        else:
            typed.append(one)
    return ("assistant" if role == "model" else role), typed


#: How a writer of Gemini contents names a call, from its tool's name and the model's id.
CallIds = Callable[[Any, Any], Any]


def call_id(name: Any, given: Any) -> Any:
    """The id Gemini CLI gives a call: ``<tool name>__<the model's id>``
    (``core/turn.ts``, ``handlePendingFunctionCall``), which its ``tool_call`` span names; the
    CLI strips the prefix again from what it sends (``stripToolCallIdPrefixes``), so a call
    comes back in the next call's history, and its response, under the model's id alone.

    >>> call_id("ls", "c1"), call_id("ls", "ls__c1"), call_id("ls", None)
    ('ls__c1', 'ls__c1', None)
    """
    if not isinstance(given, str) or not given:
        return given
    prefix = f"{(name.strip() if isinstance(name, str) else '') or 'generic_tool'}__"
    return given if given.startswith(prefix) else prefix + given


def _typed(part: Mapping[str, Any], ids: CallIds) -> dict[str, Any] | None:
    text = part.get("text")
    if isinstance(text, str):
        if not text:
            return None  # an empty text, there to carry a thought signature
        if part.get("thought") is True:
            return {"type": "reasoning", "content": text}
        return {"type": BRIEFING if is_briefing(text) else "text", "content": text}
    call = part.get("functionCall")
    if isinstance(call, MAPPINGS):
        arguments = call.get("args")
        name = call.get("name")
        return {"type": "tool_call", "id": ids(name, call.get("id")), "name": name,
                "arguments": arguments if arguments is not None else {}}  # fmt: skip
    response = part.get("functionResponse")
    if isinstance(response, MAPPINGS):
        said, failed = response_text(response.get("response"))
        # Its tool's name kept beside the schema's fields: a response without an id (ADK's
        # history) is known by it (.otlp._Rebuild._given_ids).
        answer = {"type": "tool_call_response", "response": said or "",
                  "id": ids(response.get("name"), response.get("id")),
                  "name": response.get("name")}  # fmt: skip
        return {**answer, "status": "error"} if failed else answer
    image = inline_image(part.get("inlineData"))
    if image is not None:
        modality = "image" if image.media_type.startswith("image/") else None
        return {"type": "blob", "mime_type": image.media_type or None, "modality": modality,
                "content": image.data}  # fmt: skip
    file = part.get("fileData")
    if isinstance(file, MAPPINGS):
        return {"type": "uri", "uri": file.get("fileUri"), "mime_type": file.get("mimeType")}
    kinds = [key for key in part if key not in _SILENT_FIELDS]
    return {"type": kinds[0]} if kinds else None


def merged_chunks(messages: list[Any]) -> list[Any]:
    """A streamed ``llm_call``'s output, one ``Content`` per chunk, as the one content of its
    response, as the next call's history holds it: consecutive ``model`` contents of Gemini
    parts joined (their texts then join, :func:`gemini_content`).

    >>> merged_chunks([{"role": "model", "parts": [{"text": "a"}]},
    ...                {"role": "model", "parts": [{"text": "b"}]}])
    [{'role': 'model', 'parts': [{'text': 'a'}, {'text': 'b'}]}]
    """
    out: list[Any] = []
    for message in messages:
        last = out[-1] if out else None
        if _is_model_content(message) and last is not None and _is_model_content(last):
            out[-1] = {**last, "parts": [*last["parts"], *message["parts"]]}
        else:
            out.append(message)
    return out


def _is_model_content(message: Any) -> bool:
    return (
        isinstance(message, MAPPINGS)
        and message.get("role") == "model"
        and isinstance(message.get("parts"), list)
        and all(map(is_gemini_part, message["parts"]))
    )


# --- values the tracer cut ------------------------------------------------------------------


def cut_length(value: Any) -> int | None:
    """The length a value had before the tracer cut it, None for a value written whole.

    >>> cut_length('[{"role": "us...[TRUNCATED: original length 42931]'), cut_length("[]")
    (42931, None)
    """
    # Only the tail is searched: a value may be megabytes long, the mark is at its end.
    match = _CUT.search(value, max(0, len(value) - 64)) if isinstance(value, str) else None
    return int(match[1]) if match else None


def cut_json(value: str) -> Any:
    """What a cut JSON text holds whole: of a list, the items complete before the cut; of an
    object, its members read before the cut, a member the cut went through kept as far as it
    was read (where a ``CompletedToolCall`` holds its ``status`` and its response's first
    members); nothing past the cut, and no item or text the cut went through.

    >>> cut_json('[{"a": 1}, {"b": "tw...[TRUNCATED: original length 99]')
    [{'a': 1}]
    >>> cut_json('{"status": "error", "response": {"callId": "c", "parts": [{"x": "y...'
    ...          '[TRUNCATED: original length 99]')
    {'status': 'error', 'response': {'callId': 'c', 'parts': []}}
    """
    import ijson  # type: ignore[import-untyped]  # only where a value was cut

    text = _CUT.sub("", value).encode()
    #: The containers open where the reading stopped, outermost first, with the key each
    #: object is reading the value of.
    open_: list[tuple[Any, Any]] = []
    root: Any = None
    try:
        for event, data in ijson.basic_parse(text, use_float=True):
            if event in ("start_map", "start_array"):
                if len(open_) >= _DEEPEST:
                    break
                made: Any = {} if event == "start_map" else []
                root = _put(open_, made, root)
                open_.append((made, None))
            elif event in ("end_map", "end_array"):
                open_.pop()
            elif event == "map_key":
                open_[-1] = (open_[-1][0], data)
            else:
                root = _put(open_, data, root)
    except ijson.JSONError:
        pass
    # The item of a list the cut went through is no item; a member of an object stays.
    for (outer, _), (inner, _) in itertools.pairwise(open_):
        if isinstance(outer, list) and outer and outer[-1] is inner:
            outer.pop()
    return root


def _put(open_: list[tuple[Any, Any]], value: Any, root: Any) -> Any:
    """Put ``value`` in the innermost open container (at the key it reads, for an object);
    the root, which is ``value`` when nothing is open."""
    if not open_:
        return value
    container, key = open_[-1]
    if isinstance(container, list):
        container.append(value)
    else:
        container[key] = value
    return root


def cut_reasons(span: Span) -> list[str]:
    """A warning for each content attribute of ``span`` the tracer cut."""
    reasons = []
    for key in _CONTENT:
        length = cut_length(span.attributes.get(key))
        if length is not None:
            reasons.append(
                f"span {span.span_id} ({span.name}): its {key} was cut by the tracer to "
                f"{len(span.attributes[key])} of {length} characters: what it holds whole is "
                "read, the rest is not in the trace"
            )
    return reasons


# --- tool and agent spans -------------------------------------------------------------------


def is_gemini_cli(span: Span, operation: str) -> bool:
    """Whether ``span`` is one of Gemini CLI's of ``operation`` (its own operation name)."""
    return span.attributes.get("gen_ai.operation.name") == operation


def tool_call_outcome(span: Span) -> tuple[ToolStatus, ToolResult | None] | None:
    """The status and result of a Gemini CLI ``tool_call`` span, from its output, the
    ``CompletedToolCall`` (:func:`cut_json` when the tracer cut it): the status the CLI gave
    the call (``success``, ``error``, ``cancelled``; ``unknown`` where it is not written or
    not whole), the result its response's ``functionResponse`` parts and ``resultDisplay``
    make (:func:`~turnfold.formats.gemini_parts.build_result`), else its ``error``'s message;
    None for a span of another kind.
    """
    if not is_gemini_cli(span, "tool_call"):
        return None
    raw = span.attributes.get("gen_ai.output.messages")
    if isinstance(raw, str) and cut_length(raw) is not None:
        completed = cut_json(raw)
    else:
        completed = json_value(raw)
    if not isinstance(completed, MAPPINGS):
        return "unknown", None
    recorded = completed.get("status")
    status = FINAL_STATUSES.get(recorded, "unknown") if isinstance(recorded, str) else "unknown"
    response = completed.get("response")
    if not isinstance(response, MAPPINGS):
        return status, None
    texts, images = [], []
    parts = response.get("responseParts")
    for part in parts if isinstance(parts, list) else ():
        answer = rest_part(part).get("functionResponse")
        if isinstance(answer, MAPPINGS):
            said, _ = response_text(answer.get("response"))
            if said:
                texts.append(said)
            images += images_of(answer.get("parts"))
    error = response.get("error")
    if not texts and isinstance(error, MAPPINGS) and isinstance(error.get("message"), str):
        texts.append(error["message"])
    name = span.attributes.get("gen_ai.tool.name")
    result = build_result(
        name if isinstance(name, str) else "",
        text="\n".join(texts) or None,
        display=response.get("resultDisplay"),
        images=images,
        failed=status == "error",
        cancelled=status == "cancelled",
    )
    return status, result


def agent_call_name(span: Span) -> str | None:
    """The agent a Gemini CLI ``agent_call`` span ran: its input's ``agent_name`` (the
    ``invoke_agent`` tool's argument), else its output's display's ``agentName``."""
    if not is_gemini_cli(span, "agent_call"):
        return None
    given = json_value(span.attributes.get("gen_ai.input.messages"))
    if isinstance(given, MAPPINGS) and isinstance(given.get("agent_name"), str):
        return given["agent_name"] or None
    output = json_value(span.attributes.get("gen_ai.output.messages"))
    shown = output.get("returnDisplay") if isinstance(output, MAPPINGS) else None
    name = shown.get("agentName") if isinstance(shown, MAPPINGS) else None
    return name if isinstance(name, str) and name else None
