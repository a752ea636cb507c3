"""Gemini-style ``parts`` and tool results, shared by the ``gemini``, ``qwen`` and ``gemini-api``
loaders (L-2.4).

Gemini CLI and Qwen Code both store model content as Gemini ``Content`` parts, as the Gemini API
itself does (``gemini-api``: a ``contents`` list as google-genai or the REST API holds it):

- ``{"text": ...}`` — text; ``{"text": ..., "thought": true}`` — reasoning (a :class:`Thinking`);
- ``{"functionCall": {id, name, args}}`` — a :class:`ToolCall` (``call_id`` = ``functionCall.id``);
- ``{"functionResponse": {id, name, response: {output | error}}}`` — a tool result;
- ``{"inlineData": {mimeType, data}}`` — an image (kept on tool results only);
- ``thoughtSignature`` and other opaque keys carry nothing to show and are ignored.

The REST API spells a part's fields in camelCase, google-genai's ``model_dump`` in snake_case
(``function_call``, ``inline_data.mime_type``): :func:`rest_part` reads either as the REST
spelling the functions here read; its base64 data is standard base64 (:func:`base64_text`).

Both tools also share the ``resultDisplay`` shapes of a tool result: a string, a file diff
(``{fileDiff, fileName, ...}`` → kind ``diff``), a todo list (``{todos}`` or
``{type: "todo_list"}`` → ``todo``), a plan (``{type: "plan_summary"}`` → ``plan``), a sub-agent
run (``{type: "task_execution"}`` → ``subagent``) and ANSI output (token lines → plain text).

>>> as_parts("hi")
[{'text': 'hi'}]
>>> joined_text(as_parts([{"text": "a"}, {"text": "b", "thought": True}]))
'a'
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from turnfold.formats.common import (
    NameSet,
    describe_args,
    parse_arguments,
    partial_output,
    stringify,
    text_result,
)
from turnfold.formats.source import Source
from turnfold.model import (
    AssistantText,
    Entry,
    ImageData,
    ResultKind,
    SubAgent,
    Thinking,
    ThinkingForm,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
)
from turnfold.tools import memory_operation, tool_category
from turnfold.usage import attach_usage, count_tokens

Part = dict[str, Any]

#: Outcomes the sources state explicitly (spec L-3); anything else stays ``unknown``.
FINAL_STATUSES: dict[str, ToolStatus] = {
    "success": "success",
    "error": "error",
    "cancelled": "cancelled",
}
#: Tools whose arguments are the todo list itself (Gemini ``write_todos``, Qwen ``todo_write``).
TODO_TOOLS = NameSet({"write_todos", "todo_write", "TodoWrite"})
#: Qwen Code's sub-agent tools; ``task`` is categorised in tools.py, ``agent`` not yet.
AGENT_TOOLS = NameSet({"task", "agent", "delegate_to_agent"})


def camel(name: str) -> str:
    """A field's REST name: ``mime_type`` is ``mimeType`` (a camelCase name stays itself).

    >>> camel("function_call"), camel("functionCall")
    ('functionCall', 'functionCall')
    """
    if "_" not in name:
        return name
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def camel_keys(value: Any) -> dict[str, Any]:
    """A Gemini object's own fields under their REST names, its null ones left out (a Python
    ``model_dump()`` writes every field); the values inside are not renamed: a function's
    ``args`` and ``response`` are the program's own JSON."""
    if not isinstance(value, Mapping):
        return {}
    return {camel(str(k)): v for k, v in value.items() if v is not None}


def rest_part(part: Any) -> Part:
    """A ``Part`` as the REST API spells it, from its REST JSON or google-genai's snake_case
    ``model_dump``: its fields and those of the object each holds (``functionCall``,
    ``inlineData``…) renamed, a function response's own ``parts`` too; nulls left out.

    >>> rest_part({"function_call": {"name": "f", "args": {"file_path": "a"},
    ...            "will_continue": None}, "thought_signature": None})
    {'functionCall': {'name': 'f', 'args': {'file_path': 'a'}}}
    """
    rest = camel_keys(part)
    for key, value in rest.items():
        if isinstance(value, Mapping):
            inner = camel_keys(value)
            if key == "functionResponse" and isinstance(inner.get("parts"), list):
                inner["parts"] = [rest_part(p) for p in inner["parts"]]
            rest[key] = inner
    return rest


def base64_text(data: Any) -> str | None:
    """Inline data as standard base64: google-genai's JSON writes bytes in URL-safe base64
    (pydantic's ``ser_json_bytes="base64"``), which no ``data:`` URL shows, and its Python
    ``model_dump()`` keeps them as bytes; None for anything else.

    >>> base64_text("-vv8_f7_"), base64_text(b"\\xfa\\xfb")
    ('+vv8/f7/', '+vs=')
    """
    if isinstance(data, bytes | bytearray):
        return base64.b64encode(data).decode("ascii")
    if isinstance(data, str):
        return data.translate(_URL_SAFE)
    return None


_URL_SAFE = str.maketrans("-_", "+/")


def as_parts(content: Any) -> list[Part]:
    """A ``PartListUnion`` (a string, a part, or a list of both) as a list of part dicts."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [
            {"text": p} if isinstance(p, str) else p for p in content if isinstance(p, str | dict)
        ]
    return []


def joined_text(parts: list[Part], *, thought: bool = False, sep: str = "") -> str:
    """The text of the (non-)thought text parts, joined with ``sep``."""
    return sep.join(
        p["text"]
        for p in parts
        if isinstance(p.get("text"), str) and p["text"] and (p.get("thought") is True) == thought
    )


def images_of(parts: Any) -> list[ImageData]:
    """Inline images (``inlineData``) among ``parts``."""
    images = []
    for part in as_parts(parts):
        image = inline_image(part.get("inlineData"))
        if image is not None:
            images.append(image)
    return images


def inline_image(data: Any) -> ImageData | None:
    """An ``inlineData`` blob (``{mimeType, data}``) as :class:`ImageData`; None when it holds
    no data."""
    if not isinstance(data, Mapping):
        return None
    encoded = base64_text(data.get("data"))
    if encoded is None:
        return None
    media_type = data.get("mimeType")
    return ImageData(media_type=media_type if isinstance(media_type, str) else "", data=encoded)


def count_of(data: Mapping[str, Any], *keys: str) -> int | None:
    """The value of the first of ``keys`` that ``data`` holds as an integer (a bool is none)."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def usage_from(data: Any) -> Usage | None:
    """Token usage from Gemini CLI ``tokens`` or a Gemini ``usageMetadata`` (Qwen Code).

    The prompt count includes cached tokens, as :mod:`turnfold.usage` counts input; the results
    of tools the server ran (code execution, search), fed back to the model, are counted apart
    (``toolUsePromptTokenCount``, Gemini CLI's ``tool``) and added to the input here. Gemini
    counts thoughts apart from the candidates (its total adds both), and they are added to the
    output here; but Qwen Code's OpenAI converter writes the completion's count, reasoning
    included, as the candidates, its total prompt plus candidates: then the candidates are the
    whole output. Without a total that tells, Gemini's names are read as Gemini means them.
    """
    if not isinstance(data, Mapping):
        return None
    prompt = count_of(data, "input", "promptTokenCount")
    tool_use = count_of(data, "tool", "toolUsePromptTokenCount")
    if tool_use:  # the total adds it to the prompt's count: input the model was billed for
        prompt = (prompt or 0) + tool_use
    output = count_of(data, "output", "candidatesTokenCount")
    thoughts = count_of(data, "thoughts", "thoughtsTokenCount")
    total = count_of(data, "total", "totalTokenCount")
    if output is None and thoughts is None and prompt is not None and total == prompt:
        # Written as proto3 JSON, which leaves out a count of 0: a response that wrote nothing
        # (blocked before its first word) records its output as none by its total.
        output = 0
    elif output is None:
        output = thoughts
    elif prompt is None or total != prompt + output:  # thoughts apart, as Gemini counts them
        output += thoughts or 0
    usage = Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=count_of(data, "cached", "cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )
    return usage if usage_meta(usage) else None


def usage_meta(usage: Usage) -> dict[str, int]:
    """Usage as a plain dict, for a response that wrote no text to carry it."""
    fields = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }
    return {key: value for key, value in fields.items() if value is not None}


def make_call(
    call_id: Any,
    name: Any,
    raw_args: Any,
    *,
    timestamp: str | None,
    batch_id: str | None,
    cwd: str | None,
) -> ToolCall:
    """A tool call with no outcome yet (status ``unknown`` until a result says otherwise)."""
    name = name if isinstance(name, str) else ""
    args = parse_arguments(raw_args)
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) else "",
        name=name,
        args=args,
        description=describe_args(name, args, cwd),
        status="unknown",
        batch_id=batch_id,
        started_at=timestamp,
        timestamp=timestamp,
        memory=memory_operation({"name": name}),
    )


def model_entries(
    parts: list[Part],
    *,
    timestamp: str | None,
    batch_id: str | None,
    model: str | None,
    usage: Usage | None,
    thought_form: ThinkingForm,
    cwd: str | None = None,
    skip_call_ids: frozenset[str] = frozenset(),
    other: Callable[[Part, list[Entry]], None] | None = None,
) -> list[Entry]:
    """The entries of one model response: thoughts, text and calls, in part order.

    Consecutive text parts are one streamed text, so they merge; so do consecutive thoughts.
    Usage goes on the last text of the response (spec: usage on the last text); a response
    without text keeps it on its first thinking or call rather than losing it. A part of any
    other kind is given to ``other`` with the entries so far, to add to them (the Gemini API's
    code execution, the images a model returns) or to warn of; without it, it is passed over.
    """
    entries: list[Entry] = []
    for part in parts:
        text = part.get("text")
        call = part.get("functionCall")
        if isinstance(text, str) and text:
            last = entries[-1] if entries else None
            if part.get("thought") is True:
                if isinstance(last, Thinking):
                    last.text += text
                else:
                    entries.append(Thinking(text=text, form=thought_form, timestamp=timestamp))
            elif isinstance(last, AssistantText):
                last.text += text
            else:
                entries.append(AssistantText(text=text, model=model, timestamp=timestamp))
        elif isinstance(call, dict) and not (
            isinstance(call.get("id"), str) and call["id"] in skip_call_ids
        ):
            entries.append(
                make_call(
                    call.get("id"),
                    call.get("name"),
                    call.get("args"),
                    timestamp=timestamp,
                    batch_id=batch_id,
                    cwd=cwd,
                )
            )
        elif other is not None and not isinstance(call, dict) and not isinstance(text, str):
            other(part, entries)
    attach_usage(entries, usage)
    return entries


def response_text(response: Any) -> tuple[str | None, bool]:
    """The text of a ``functionResponse.response`` and whether it reports an error.

    The API's convention: ``error`` is a failure, ``output`` the function's output, and
    without either the whole response is the output; google-genai's automatic function
    calling answers ``{"result": value}`` (and ``{"error": message}`` when the function
    raised), so a lone ``result`` is the output too.
    """
    if isinstance(response, dict):
        error = response.get("error")
        if error not in (None, "", {}):
            return stringify(error), True
        key = (
            "output" if "output" in response else "result" if set(response) == {"result"} else None
        )
        if key is not None:
            output = response[key]
            return (stringify(output) if output is not None else None), False
        return (stringify(response) if response else None), False
    return (stringify(response) if response is not None else None), False


# --- what a result's own text says of the outcome ----------------------------------------------

#: ``Exit Code: 2`` (Gemini CLI's and Qwen Code's shell output header), ``Command exited with
#: code 2`` (``Command exited with code: 2``, what Gemini CLI's shell tool displays for a command
#: that printed nothing: ``packages/core/src/tools/shell.ts``); a line of its own, so a file that
#: merely mentions exit codes is not read as one.
_EXIT_CODE = re.compile(
    r"^(?:Exit Code:|Command exited with code:?|Process exited with code) *(-?\d+)\b",
    re.MULTILINE | re.IGNORECASE,
)
#: Failures a tool reports in the first line of its output rather than in a status: a line
#: that starts ``Error``, or a sentence about the call itself (``Command timed out after 120s``,
#: ``Tool call was rejected by the user.``). The words alone are not enough: a result that
#: merely holds them (a read file's first line, a JSON list of labels named ``Rejected``) is
#: what the tool returned, not a failure it states.
_FAILED_FIRST_LINE = re.compile(
    r"^(?:error\b(?!\s*:?\s*\(none\))"
    r"|(?:the )?(?:command|tool(?: call)?|call|request|operation|execution|process)\b"
    r"[^.\n]{0,80}?\b(?:timed out|rejected)\b)",
    re.IGNORECASE,
)
#: Gemini CLI wraps tool output in this tag (prompt-injection fencing); it is not the output.
_FENCE = re.compile(r"^\s*<untrusted_context>\s*|\s*</untrusted_context>\s*$")


def stated_outcome(text: str | None, display: Any = None) -> ToolStatus | None:
    """The outcome a tool result's text states, None when it states none (spec L-3).

    Gemini CLI and Qwen Code record a shell command that failed as ``status: "success"``: the
    failure is only in the output (``Exit Code: 2``). One rule for both formats: a non-zero exit
    code, ``Command exited with code N``, a first line ``Error: …`` (not Qwen Code's
    ``Error: (none)`` header field), or one saying the call timed out or was rejected
    (:data:`_FAILED_FIRST_LINE`) is ``error``; ``Exit Code: 0``
    is ``success``. Qwen Code's ``shell_result`` display states its ``exitCode`` too.

    >>> stated_outcome("Output: ls: cannot access 'x'\\nExit Code: 2")
    'error'
    >>> stated_outcome("Output: hi\\nError: (none)\\nExit Code: 0") , stated_outcome("ok")
    ('success', None)
    """
    if isinstance(display, Mapping) and display.get("type") == "shell_result":
        code = display.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool):
            return "success" if code == 0 else "error"
    if not text:
        return None
    body = text[:4096]  # the verdict is in the head; a 10 MB output is not read
    if "untrusted_context" in body:  # the fence's pattern scans every space: only where it is
        body = _FENCE.sub("", body)
    code_match = _EXIT_CODE.search(body)
    if code_match:
        return "success" if int(code_match[1]) == 0 else "error"
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return "error" if _FAILED_FIRST_LINE.match(first) else None


def corrected_status(recorded: ToolStatus, text: str | None, display: Any = None) -> ToolStatus:
    """The recorded status, corrected by what the result's text states.

    A stated failure wins over a recorded ``success`` (the formats record failed commands as
    successes); a stated outcome fills in an unrecorded one. ``cancelled`` and ``error`` stand.
    """
    stated = stated_outcome(text, display)
    if stated == "error" and recorded in ("success", "unknown"):
        return "error"
    if stated is not None and recorded == "unknown":
        return stated
    return recorded


def _ansi_text(lines: Any) -> str | None:
    """Gemini's ``AnsiOutput`` (lines of styled tokens) as plain text; styles are dropped."""
    if not isinstance(lines, list):
        return None
    rows = []
    for line in lines:
        tokens = line if isinstance(line, list) else []
        rows.append(
            "".join(
                t["text"] for t in tokens if isinstance(t, dict) and isinstance(t.get("text"), str)
            )
        )
    return "\n".join(rows)


# Big file contents are left out of a diff's structured data: the diff text shows the change.
_DIFF_BULK = NameSet({"fileDiff", "originalContent", "newContent"})
# A sub-agent display's per-call list and prompt repeat what the child transcript and args hold.
_AGENT_BULK = NameSet({"toolCalls", "taskPrompt", "pendingConfirmation"})


def build_result(
    name: str,
    *,
    text: str | None,
    display: Any,
    args: Any = None,
    images: list[ImageData] | None = None,
    failed: bool = False,
    cancelled: bool = False,
) -> ToolResult | None:
    """A :class:`ToolResult` from the model-facing ``text`` and the UI's ``resultDisplay``.

    The model-facing output is preferred (it is complete; Gemini's display of a read is empty);
    the display fills in when there is no output, and decides the kind: a diff, a todo list,
    a plan or a sub-agent report. A failed call is plain text: its error is what to show. A
    cancelled call's text display is what it printed before the cancel, which the model was
    not sent ("its output was discarded"): shown before that text (F-10: a cancelled tool
    keeps its partial output). Returns None when the source recorded nothing at all.
    """
    kind: ResultKind | None = None
    structured: Any = None
    fallback: str | None = None
    if isinstance(display, str):
        fallback = display or None
    elif isinstance(display, list):
        fallback = _ansi_text(display)
    elif isinstance(display, dict) and not failed:
        kind, structured, fallback, text = _display_kind(display, text)
    elif isinstance(display, dict):
        fallback = _ansi_text(display.get("ansiOutput"))
    if kind is None and not failed and name in TODO_TOOLS and isinstance(args, dict):
        todos = args.get("todos")
        if isinstance(todos, list):
            kind, structured = "todo", todos
    if cancelled and text:
        text = partial_output(fallback, text) or text
    text = text if text else fallback
    if text is None and not images and structured is None:
        return None
    return text_result(text, kind, images=list(images or []), structured=structured)


def _display_kind(
    display: dict[str, Any], text: str | None
) -> tuple[ResultKind | None, Any, str | None, str | None]:
    """(kind, structured, fallback text, text) for a structured ``resultDisplay``."""
    if isinstance(display.get("fileDiff"), str):
        slim = {k: v for k, v in display.items() if k not in _DIFF_BULK}
        return "diff", slim, None, display["fileDiff"]
    kind = display.get("type")
    if kind == "todo_list" or isinstance(display.get("todos"), list):
        return "todo", display.get("todos"), None, text
    if kind == "plan_summary":
        plan = display.get("plan")
        slim = {k: v for k, v in display.items() if k not in ("plan", "type")}
        return "plan", slim, None, plan if isinstance(plan, str) else text
    if kind == "task_execution":
        slim = {k: v for k, v in display.items() if k not in _AGENT_BULK}
        result = display.get("result")
        return "subagent", slim, result if isinstance(result, str) else None, text
    return None, None, _ansi_text(display.get("ansiOutput")), text


@dataclass
class PendingResult:
    """A tool result that arrived apart from its call (Qwen ``tool_result``, synced history)."""

    call_id: str
    result: ToolResult | None
    #: ``None`` when the source does not say how the call ended.
    status: ToolStatus | None
    ended_at: str | None
    line: int | None = None
    #: The tool's name, when the result gives it (``functionResponse.name``).
    name: str = ""


class Assembler:
    """Entries in order, with results paired to their calls by call id (one per transcript)."""

    def __init__(self, source: Source, *, warn_unmatched: bool, overwrite: bool) -> None:
        self.source = source
        self.warn_unmatched = warn_unmatched
        #: Whether a later result replaces an earlier one (else it only fills a missing one).
        self.overwrite = overwrite
        self.entries: list[Entry] = []
        self.calls: dict[str, ToolCall] = {}

    def add(self, item: Entry | PendingResult) -> None:
        if isinstance(item, PendingResult):
            self._resolve(item)
            return
        self.entries.append(item)
        if isinstance(item, ToolCall) and item.call_id:
            self.calls[item.call_id] = item

    def _resolve(self, pending: PendingResult) -> None:
        call = self.calls.get(pending.call_id)
        if call is None:
            if self.warn_unmatched:
                self._orphan(pending)
            return
        if call.result is not None and not self.overwrite:
            return
        # The entry is not in a Transcript yet, so plain assignment notifies no one.
        if pending.result is not None:
            call.result = pending.result
        if pending.status is not None:
            call.status = pending.status
        call.ended_at = pending.ended_at or call.ended_at

    def _orphan(self, pending: PendingResult) -> None:
        """A result whose call the source does not hold (a file whose start was lost): a call
        of its own when the result names its tool, its arguments unknown; else said only."""
        if not pending.name:
            reason = f"tool result for unknown call id {pending.call_id!r} skipped"
            self.source.warn(reason, pending.line)
            return
        reason = (
            f"tool result for call id {pending.call_id!r}, whose call is not in the file, "
            "shown as a call of its own"
        )
        self.source.warn(reason, pending.line)
        call = ToolCall(
            call_id=pending.call_id,
            name=pending.name,
            status=pending.status or "unknown",
            result=pending.result,
            timestamp=pending.ended_at,
            ended_at=pending.ended_at,
        )
        call.meta["call_missing"] = True
        self.entries.append(call)
        self.calls[call.call_id] = call


# --- sub-agents ---------------------------------------------------------------------------------


def is_agent_call(name: str) -> bool:
    """Whether a tool name spawns a sub-agent."""
    return name in AGENT_TOOLS or tool_category(name) == "agent"


def child_stats(child: Transcript) -> tuple[int, int | None]:
    """(tool calls, output tokens) of a child transcript; tokens only when some were recorded."""
    return len(child.tool_calls()), count_tokens(child.entries).get("output_tokens")


def attach_child(agent: SubAgent, child: Transcript) -> None:
    """Give ``agent`` its child transcript and the counts the source leaves to be derived."""
    agent.transcript = child
    tools, tokens = child_stats(child)
    if agent.tool_count is None:
        agent.tool_count = tools
    if agent.output_tokens is None:
        agent.output_tokens = tokens
