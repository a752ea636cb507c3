"""OpenAI Responses API items (spec L-2.5), and the item conversion Codex rollouts reuse.

Input shapes: a list of items (a request's ``input`` or a response's ``output``), as dicts, SDK
objects (``load`` turns them into dicts) or JSON lines; a whole Response object
``{"object": "response", "output": [...]}`` (or a JSONL of them); a request ``{"input": ...}``;
a logged API call (:func:`~turnfold.formats.wrappers.exchange`: ``{"request": {...},
"response": {...}}``, or a request with the ``response`` beside its input): the request, then
the Response; a line of an OpenAI Batch API file of ``/v1/responses`` calls
(:func:`~turnfold.formats.wrappers.batch_line`; such a file is a file of runs, each named by
its ``custom_id``): an input line's request (its ``body``, the line's ``custom_id``,
``method`` and ``url`` kept as metadata), or an output line's Response after a prompt not
recorded (the output file holds no request). A failed line, whose endpoint its line does not
say, is read by the Chat format (``openai``); a streamed call's raw events
(``create(stream=True)``, each ``event.model_dump()`` a line, a request written before them or
not): the events of each response put together into the Response they stand for
(:mod:`~turnfold.formats.responses_stream`), read as a Response: the terminal event's
(``response.completed``, ``failed``, ``incomplete``) when it came; else the items as far as
they came, and the stream is a run cut off (:func:`~turnfold.formats.common.stream_cut_off`);
an ``error`` event is an :class:`AssistantError` after what came before it.

Mapping (:class:`ResponsesBuilder`):

- ``message`` role ``user`` → :class:`UserMessage` (``input_text`` parts; ``input_image``
  ``data:`` URLs are its ``images``; an ``input_file`` or an image by URL or file id is a line
  naming it, ``[attachment: data.csv · text/csv · 4 B]``; all are counted in ``meta``); role
  ``assistant`` → :class:`AssistantText` (``output_text``; a ``refusal`` part is an
  AssistantText with ``meta["refusal"]``; ``status: "incomplete"`` is kept in ``meta``); roles
  ``system`` / ``developer`` are instructions, not prompts: their text goes to
  ``metadata["system"]`` (so do a request's or a Response's ``instructions``, once);
- ``reasoning`` → :class:`Thinking`: raw ``content`` as ``form="text"``, else the ``summary`` as
  ``form="summary"``, else ``encrypted_content`` alone as ``form="encrypted"`` with the payload in
  ``data``; a reasoning item with none of them adds nothing (never an empty box, spec P-9);
- calls → :class:`ToolCall` with the item's ``call_id`` (``id`` for hosted tools, which have no
  call id; ``<type>@<line>`` when there is neither): ``function_call`` (``arguments`` parsed),
  ``custom_tool_call`` (``input`` parsed when it is JSON, else kept as the raw string),
  ``local_shell_call`` (``local_shell``, args = the ``action``), ``computer_call``
  (``computer``), ``tool_search_call``, ``shell_call`` (``shell``, args = the ``action``'s
  commands), ``apply_patch_call`` (``apply_patch``, args = the ``operation``: its path and
  diff), ``program`` (``program``, args = its ``code``); their outputs (``*_output`` items)
  pair by ``call_id``. The shell's outputs state each command's exit code or timeout (any
  failure → ``error``, all zero → ``success``), ``apply_patch_call_output`` its status
  (``completed``/``failed``) and ``program_output`` its own (``completed``/``incomplete`` →
  ``cancelled``); the other outputs record no error flag, so a call with one is ``unknown``
  (spec L-3), but for the OpenAI Agents SDK's default tool-error text, which is ``error``
  (a ``RunResult.to_input_list()`` saved is a list of Responses items); one without is
  ``executing`` in a live feed and ``unknown`` in a static load;
  ``status: "incomplete"`` or a cancelled response makes it ``cancelled``;
- hosted tools carry their own outcome: ``web_search_call``, ``file_search_call``,
  ``code_interpreter_call``, ``image_generation_call`` and ``mcp_call`` map ``status``
  ``completed`` → ``success``, ``failed`` → ``error``, ``incomplete`` / ``cancelled`` →
  ``cancelled`` (``mcp_call.error`` → ``error``); their results (search results, logs, the
  generated image) come from the item itself; a web search is described by what it did
  (:func:`web_search_detail`: its query, the page it opened, ``'pattern' in url`` for a find
  in a page);
- an MCP call awaiting the user's approval: ``mcp_approval_request`` is the call (``server_label``,
  ``name``, ``arguments`` as an ``mcp_call``'s), ``confirming`` until its
  ``mcp_approval_response`` (by ``approval_request_id``) decides it: ``approve: false`` →
  ``cancelled`` with ``meta["approval"] = "denied"`` and the ``reason`` as its result; ``approve:
  true`` → the ``mcp_call`` that carries the same ``approval_request_id`` settles that same call
  (one call, not two); an approval that no ``mcp_call`` follows leaves the outcome not recorded;
- results by tool: ``apply_patch`` with its patch text → kind ``diff``; ``update_plan`` → kind
  ``plan`` (a checklist, the plan itself in ``structured``); anything else ``text``/``ansi``,
  inline ``data:`` images in ``images``;
- ``compaction`` (encrypted, remote compaction) → :class:`CompactionBoundary`;
- a Response object: its ``output`` items form one batch under the response ``id``; ``usage``
  goes on its last AssistantText; ``created_at`` dates its entries; status ``incomplete`` /
  ``cancelled`` → :class:`AbortMarker` (reason from ``incomplete_details``) and its unfinished
  calls ``cancelled``; ``failed`` → :class:`AssistantError`.

Batches (spec §3) of a bare item list: consecutive calls form one batch, ``batch-<line>`` after
the first call's line; any message, reasoning or call output ends it (a model response lists
its calls together, and its outputs come back before the next response's items).

Skipped silently, as bookkeeping without content: ``item_reference``, ``mcp_list_tools``.
Any other item type is skipped with one warning per line (spec L-4).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from turnfold.formats import responses_stream as streamed
from turnfold.formats.anthropic_blocks import attachment_line as anthropic_attachment_line
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    MessageBuilder,
    NameSet,
    as_list,
    counted_usage,
    describe_args,
    parse_arguments,
    prompt_not_recorded,
    relative,
    stream_cut_off,
    stringify,
    text_and_images,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import Source, type_of_record
from turnfold.formats.wording import failure
from turnfold.formats.wording import result as worded_result
from turnfold.formats.wrappers import (
    RESPONSES_URL,
    BatchLine,
    Exchange,
    batch_line,
    exchange,
    find_messages,
    keep_wrapper_keys,
    sample,
)
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
    maker,
)
from turnfold.usage import attach_usage

NAME = "openai-responses"

#: Calls whose outcome arrives later as a ``*_output`` item with the same ``call_id``.
DEFERRED_CALLS: dict[str, str] = {
    "function_call": "",
    "custom_tool_call": "",
    "local_shell_call": "local_shell",
    "computer_call": "computer",
    "tool_search_call": "tool_search",
    "shell_call": "shell",
    "apply_patch_call": "apply_patch",
    "program": "program",
}
#: Hosted (built-in) tools: the item is the call and its outcome at once.
HOSTED_CALLS: dict[str, str] = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "mcp_call": "",
}
#: Output item type → the tool name an output without a known call gets.
OUTPUTS: dict[str, str] = {
    "function_call_output": "",
    "custom_tool_call_output": "",
    "local_shell_call_output": "local_shell",
    "computer_call_output": "computer",
    "tool_search_output": "tool_search",
    "shell_call_output": "shell",
    "apply_patch_call_output": "apply_patch",
    "program_output": "program",
}
#: Outputs that state how their call ended (the shell's exit code, the patch's and the
#: program's status), so those calls get a status where other outputs leave it unknown.
_PATCH_STATUS: dict[str, ToolStatus] = {"completed": "success", "failed": "error"}
_PROGRAM_STATUS: dict[str, ToolStatus] = {"completed": "success", "incomplete": "cancelled"}
SILENT_ITEMS = NameSet(
    {
        "item_reference",
        "mcp_list_tools",
        "additional_tools",
        "compaction_trigger",
    }
)
#: An MCP call the user approves or denies before it runs (the request is the call).
APPROVAL_REQUEST, APPROVAL_RESPONSE = "mcp_approval_request", "mcp_approval_response"
ITEM_TYPES = NameSet(
    {"message", "reasoning", "compaction", "compaction_summary"}
    | {APPROVAL_REQUEST, APPROVAL_RESPONSE}
    | DEFERRED_CALLS.keys()
    | HOSTED_CALLS.keys()
    | OUTPUTS.keys()
    | SILENT_ITEMS
)

_HOSTED_STATUS: dict[str, ToolStatus] = {
    "completed": "success",
    "failed": "error",
    "incomplete": "cancelled",
    "cancelled": "cancelled",
}
_TEXT_PARTS = NameSet({"input_text", "output_text", "text"})
_TYPED_PARTS = NameSet({"input_text", "output_text", "input_image", "input_file"})
_PATCH_TOOL = "apply_patch"
_PLAN_TOOL = "update_plan"
_PLAN_MARKS = {"completed": "[x]", "in_progress": "[-]"}


# --- small conversions, shared with the Chat Completions and Codex loaders ----------------------


def unix_timestamp(value: Any) -> str | None:
    """Unix seconds (``created_at``, ``created``) as ISO-8601 UTC; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(value, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat().replace("+00:00", "Z")


def warned_unix_timestamp(
    value: Any, warn: Callable[[str], object], what: str, name: str
) -> str | None:
    """:func:`unix_timestamp` of a record's time ``name``; one that is no time is left out
    and ``warn`` told, naming the record (``what``): ``common.warned_timestamp``."""
    return warned_timestamp(value, unix_timestamp, warn, what, name=name,
                            unit="seconds since the epoch")  # fmt: skip


def record_named(kind: str, own_id: Any) -> str:
    """What a warning calls a record of a ``kind`` and its id (cut to 80 characters), or
    ``a <kind>`` when it has none."""
    return f"{kind} {own_id[:80]}" if isinstance(own_id, str) and own_id else f"a {kind}"


def plain_copy(value: Any) -> Any:
    """A copy of a JSON-like value, so entries never share mutable state with the input (L-4)."""
    return copy.deepcopy(value) if isinstance(value, (dict, list)) else value


def parsed_arguments(raw: Any) -> Any:
    """Arguments parsed from their JSON string (a fresh value), or a copy of a given object."""
    return parse_arguments(raw) if isinstance(raw, str) else plain_copy(raw)


def data_url_image(url: Any) -> ImageData | None:
    """``data:image/png;base64,...`` as an :class:`ImageData`; remote URLs are never fetched."""
    if not isinstance(url, str) or not url.startswith("data:image/"):
        return None
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    return ImageData(media_type=head[5:].split(";", 1)[0], data=data)


def part_image_url(part: Mapping[str, Any]) -> Any:
    url = part.get("image_url")
    return url.get("url") if isinstance(url, Mapping) else url  # Chat nests it: {"url": ...}


#: A prompt's parts that send a file: Chat's ``file`` and ``input_audio``; Responses'
#: ``input_file``.
_FILE_PARTS = NameSet({"file", "input_audio", "input_file"})
_IMAGE_PARTS = NameSet({"image_url", "input_image"})


def prompt_images(content: Any) -> list[ImageData]:
    """The inline images of a prompt's content list (image parts holding a ``data:`` URL)."""
    if not isinstance(content, list):
        return []
    found = (
        data_url_image(part_image_url(part))
        for part in content
        if isinstance(part, Mapping) and part.get("type") in _IMAGE_PARTS
    )
    return [image for image in found if image is not None]


def attachment_lines(content: Any) -> list[str]:
    """A line for each part of a prompt that was sent but cannot be shown inline: a file, an
    audio clip, an image by URL or file id. Its content is not shown, that it was sent is
    (spec X-2), in the words the Anthropic loader uses for a file block.

    >>> attachment_lines([{"type": "text", "text": "Summarise"},
    ...                   {"type": "file", "file": {"filename": "r.pdf",
    ...                    "file_data": "data:application/pdf;base64,QUJD"}},
    ...                   {"type": "input_image", "image_url": "https://example.com/a.png"}])
    ['[attachment: r.pdf · application/pdf · 3 B]', '[attachment: https://example.com/a.png]']
    """
    lines: list[str] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in _IMAGE_PARTS:
            url = part_image_url(part)
            if data_url_image(url) is not None:
                continue  # shown as an image
            remote = isinstance(url, str) and url and not url.startswith("data:")
            name = url if remote else part.get("file_id")
            if isinstance(name, str) and name:
                lines.append(anthropic_attachment_line({"type": "image", "name": name}))
        elif kind in _FILE_PARTS:
            lines.append(anthropic_attachment_line(_file_block(str(kind), part)))
    return lines


def _file_block(kind: str, part: Mapping[str, Any]) -> dict[str, Any]:
    """A prompt's file or audio part in the shape of an Anthropic file block (name, media
    type, base64 data): Chat nests its fields (``{"file": {...}}``), Responses does not."""
    inner = part.get(kind)
    fields: Mapping[str, Any] = inner if isinstance(inner, Mapping) else part
    data = fields.get("file_data") if kind != "input_audio" else fields.get("data")
    media_type = None
    if isinstance(data, str) and data.startswith("data:"):
        head, _, data = data.partition(",")
        media_type = head[5:].split(";", 1)[0] or None
    if kind == "input_audio" and isinstance(fields.get("format"), str):
        media_type = f"audio/{fields['format']}"
    names = (fields.get("filename"), fields.get("file_url"), fields.get("file_id"))
    default = "audio" if kind == "input_audio" else None
    name = next((n for n in names if isinstance(n, str) and n), default)
    return {"type": "file", "name": name, "media_type": media_type, "source": {"data": data}}


def is_image_tag(text: str) -> bool:
    """Codex wraps pasted images in ``<image name=[Image #1]>`` … ``</image>`` text parts."""
    stripped = text.strip()
    return stripped.startswith(("<image", "</image")) and stripped.endswith(">")


def parts_text(content: Any, kinds: frozenset[str] = _TEXT_PARTS, sep: str = "\n") -> str:
    """The text of a string or of the text parts of a content list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        part["text"]
        for part in content
        if isinstance(part, Mapping)
        and part.get("type") in kinds
        and isinstance(part.get("text"), str)
        and part["text"]
    ]
    return sep.join(texts)


def attachment_counts(content: Any) -> dict[str, int]:
    """How many images and files a user's content list holds (``meta`` keeps counts, not data)."""
    counts: dict[str, int] = {}
    if not isinstance(content, list):
        return counts
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ("input_image", "image_url", "image"):
            counts["images"] = counts.get("images", 0) + 1
        elif kind in ("input_file", "file", "input_audio"):
            counts["files"] = counts.get("files", 0) + 1
    return counts


def prompt_text(text: str, counts: Mapping[str, int]) -> str:
    """A prompt's text; one of nothing but attachments says what was sent (``[image]``)."""
    if text:
        return text
    return "\n".join(f"[{key[:-1]}]" for key, n in counts.items() for _ in range(n))


def output_content(
    value: Any, part: Callable[[Mapping[str, Any]], str | ImageData | None] | None = None
) -> tuple[str | None, list[ImageData]]:
    """A tool output (string, content list or object) as display text and inline images, each
    typed part read by ``part`` (a format's own blocks; the Responses API's by default)."""
    if type(value) is str:  # most outputs: no further test
        return value, []
    if isinstance(value, Mapping) and isinstance(value.get("type"), str):
        value = [value]  # a single content item
    text, images = text_and_images(value, part or _output_part)
    # An output that is an empty list still ran and returned nothing: "", not "not recorded".
    return ("" if text is None and not images and isinstance(value, list) else text), images


def _output_part(part: Mapping[str, Any]) -> str | ImageData | None:
    if isinstance(part.get("text"), str):
        text: str = part["text"]
        return text
    if part.get("type") in ("input_image", "image_url", "computer_screenshot", "image"):
        url = part_image_url(part) or part.get("url")
        image = data_url_image(url)
        if image is not None:
            return image
        # An MCP result's image block (``{"type": "image", "data", "mimeType"}``), which
        # Codex passes on as the call's output.
        data, media_type = part.get("data"), part.get("mimeType") or part.get("mime_type")
        if isinstance(data, str) and data and str(media_type).startswith("image/"):
            return ImageData(media_type=str(media_type), data=data)
        if isinstance(url, str) and url:
            return f"[image: {url}]"  # remote images are named, never loaded
        return None
    if isinstance(part.get("logs"), str):
        logs: str = part["logs"]
        return logs
    return stringify(part)


def reasoning_thinking(item: Mapping[str, Any]) -> tuple[Thinking | None, list[str]]:
    """A reasoning item as a :class:`Thinking` (or None) and its readable parts (for dedup)."""
    content = [p for p in _part_texts(item.get("content")) if p]
    summary = [p for p in _part_texts(item.get("summary")) if p]
    if content:
        return Thinking(text="\n\n".join(content), form="text"), content
    if summary:
        return Thinking(text="\n\n".join(summary), form="summary"), summary
    encrypted = item.get("encrypted_content")
    if isinstance(encrypted, str) and encrypted:
        return Thinking(form="encrypted", data=encrypted), []
    return None, []


def _part_texts(parts: Any) -> list[str]:
    if isinstance(parts, str):
        return [parts]
    if not isinstance(parts, list):
        return []
    return [p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)]


def responses_usage(usage: Any) -> Usage | None:
    """A Responses ``usage`` object (``input_tokens``, ``output_tokens`` and their details)."""
    return openai_usage(usage, "input_tokens", "output_tokens")


def openai_usage(usage: Any, inputs: str, outputs: str) -> Usage | None:
    """An OpenAI ``usage`` whose input and output counts are named ``inputs`` and ``outputs``
    (Responses: ``input_tokens``; Chat Completions: ``prompt_tokens``), each with its
    ``<name>_details`` (``cached_tokens`` and ``cache_write_tokens``, parts of the input count
    as :mod:`turnfold.usage` counts them; ``reasoning_tokens``).

    Read by name, not through :func:`~turnfold.formats.common.usage_from`'s table: a load
    reads one per model response, and this costs a fifth of that."""
    if not isinstance(usage, MAPPINGS):
        return None
    cached, reasoning = usage.get(inputs + "_details"), usage.get(outputs + "_details")
    cached = cached if isinstance(cached, MAPPINGS) else {}
    return counted_usage(
        usage.get(inputs),
        usage.get(outputs),
        cached.get("cached_tokens"),
        cached.get("cache_write_tokens"),
        reasoning.get("reasoning_tokens") if isinstance(reasoning, MAPPINGS) else None,
    )


#: The names Codex runs as its own patch tool when a shell command calls them.
_PATCH_COMMANDS = frozenset({"apply_patch", "applypatch"})
_SHELLS = frozenset({"bash", "zsh", "sh"})
#: A script that is only a patch fed to the patch tool, as Codex recognises it
#: (``extract_apply_patch_from_bash``): ``[cd DIR &&] apply_patch <<'EOF'`` … ``EOF``.
_HEREDOC_PATCH = re.compile(
    r"\s*(?:cd\s+\S+\s*&&\s*)?(?:apply_patch|applypatch)\s*<<\s*(['\"]?)(\w+)\1[ \t]*\n"
    r"(.*?)\n\2\s*",
    re.DOTALL,
)


class NotComputed:
    """The patch of a call not worked out yet: :func:`patch_text` runs a regex over every
    shell command, so a builder works it out once per call and hands the answer on."""


NOT_COMPUTED = NotComputed()


def patch_text(name: str, args: Any) -> str | None:
    """The patch an ``apply_patch`` call applies (freeform input or ``{"input": ...}``), or a
    shell command that is one: Codex runs ``["apply_patch", PATCH]``,
    ``["bash", "-lc", "apply_patch <<'EOF' …"]`` and an ``exec_command`` whose ``cmd`` is
    ``apply_patch <<'EOF' …`` as its patch tool, not as commands (0.171 records that last one
    as a ``FileChange``, not a ``CommandExecution``)."""
    if name == _PATCH_TOOL:
        if isinstance(args, str):
            return args
        patch = (args.get("input") or args.get("patch")) if isinstance(args, MAPPINGS) else None
        if isinstance(patch, str):
            return patch
    script = args.get("cmd") if isinstance(args, MAPPINGS) else None
    if isinstance(script, str):  # unified exec: one script the user's shell runs (-lc)
        heredoc = _HEREDOC_PATCH.fullmatch(script)
        return heredoc.group(3) if heredoc else None
    command = args.get("command") if isinstance(args, MAPPINGS) else None
    if not isinstance(command, list) or not all(isinstance(part, str) for part in command):
        return None
    if len(command) == 2 and command[0] in _PATCH_COMMANDS:
        return str(command[1])  # older Codex: shell argv
    if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-lc", "-c"):
        heredoc = _HEREDOC_PATCH.fullmatch(command[2])
        return heredoc.group(3) if heredoc else None
    return None


def patch_files(patch: str) -> list[str]:
    """The files a Codex patch (``*** Update File: path`` …) touches, in order."""
    files: list[str] = []
    for line in patch.splitlines():
        for marker in ("*** Update File: ", "*** Add File: ", "*** Delete File: "):
            if line.startswith(marker):
                files.append(line[len(marker) :].strip())
    return files


def describe_call(
    name: str, args: Any, cwd: str | None, patch: str | NotComputed | None = NOT_COMPUTED
) -> str | None:
    """``common.describe_args``, except that a patch is described by the files it touches
    (``patch``: the call's :func:`patch_text`, when the caller has it already)."""
    if patch is not None:  # (most calls apply none: one test)
        if isinstance(patch, NotComputed):
            patch = patch_text(name, args)
        if patch is not None and name == _PATCH_TOOL:
            files = [relative(f, cwd) for f in patch_files(patch)]
            return describe_args(name, {"path": files}, cwd) if files else None
    return describe_args(name, args, cwd)


def plan_result(args: Any, output: str | None) -> ToolResult | None:
    """An ``update_plan`` call's plan as a checklist; None when the args hold no plan."""
    steps = args.get("plan") if isinstance(args, Mapping) else None
    if not isinstance(steps, list):
        return None
    lines = []
    explanation = args.get("explanation")
    if isinstance(explanation, str) and explanation.strip():
        lines += [explanation.strip(), ""]
    for step in steps:
        if isinstance(step, Mapping) and isinstance(step.get("step"), str):
            mark = _PLAN_MARKS.get(str(step.get("status")), "[ ]")
            lines.append(f"- {mark} {step['step']}")
    structured = {"plan": plain_copy(steps), "explanation": plain_copy(explanation)}
    if output:
        structured["output"] = output
    return ToolResult(text="\n".join(lines), kind="plan", structured=structured)


def tool_result(
    call: ToolCall,
    text: str | None,
    images: list[ImageData],
    status: ToolStatus,
    patch: str | NotComputed | None = NOT_COMPUTED,
) -> ToolResult:
    """A call's result: a diff for a patch, a plan for ``update_plan``, otherwise text
    (``patch``: the call's :func:`patch_text`, when the caller has it already)."""
    if status != "error":
        if patch is not None:  # (most calls apply none: one test)
            if isinstance(patch, NotComputed):
                patch = patch_text(call.name, call.args)
            if patch is not None:
                structured = {"output": text} if text else None
                return ToolResult(text=patch, kind="diff", images=images, structured=structured)
        if call.name == _PLAN_TOOL:
            plan = plan_result(call.args, text)
            if plan is not None:
                return plan
    return text_result(text, images=images)


#: ``agents.tool.default_tool_error_function``'s text (0.24: the sentence alone; older
#: releases appended ``Error: <exception>``): the only sign in an OpenAI Agents SDK run's
#: items (its run state, its ``to_input_list()``) that a tool failed.
AGENTS_SDK_TOOL_ERROR = "An error occurred while running the tool."


def output_outcome(
    call: ToolCall, value: Any, patch: str | NotComputed | None = NOT_COMPUTED
) -> tuple[ToolStatus, ToolResult]:
    """Status and result of ``call`` given its output ``value``. The Responses API records no
    error flag, so the status is ``unknown`` (spec L-3), except that a call already cut off
    stays ``cancelled`` and the Agents SDK's default tool-error text is ``error``."""
    text, images = output_content(value)
    status: ToolStatus = "cancelled" if call.status == "cancelled" else "unknown"
    if isinstance(value, str) and value.startswith(AGENTS_SDK_TOOL_ERROR):
        status = "error"
    return status, tool_result(call, text, images, status, patch)


def new_call(
    call_id: str,
    name: str,
    args: Any,
    cwd: str | None,
    status: ToolStatus,
    batch_id: str | None,
    timestamp: str | None,
    meta: dict[str, Any] | None,
) -> tuple[ToolCall, str | None]:
    """A call entry, not yet in any transcript, and the patch it applies (:func:`patch_text`).

    A shell command that only feeds a patch to the patch tool is that tool's call, as Codex
    runs and shows it (an edit, not a command); the name it was called by stays in its
    ``meta`` (``called_as``) and the command in its arguments. ``meta``, empty or not, is
    kept as the call's own (every caller makes a fresh one: no second dict per call)."""
    patch = patch_text(name, args)
    if name != _PATCH_TOOL and patch is not None:
        meta = {**(meta or {}), "called_as": name}
        name = _PATCH_TOOL
    description = describe_call(name, args, cwd, patch)
    meta = meta if meta is not None else {}
    call = _new_call(call_id, name, args, description, status, batch_id, timestamp, timestamp, meta)
    return call, patch


#: ``ToolCall(...)`` at a third of the cost (:func:`~turnfold.model.maker`): every call of a
#: load is made by :func:`new_call`.
_new_call = maker(
    ToolCall,
    "call_id",
    "name",
    "args",
    "description",
    "status",
    "batch_id",
    "started_at",
    "timestamp",
    "meta",
)


# --- the builder ---------------------------------------------------------------------------------

ItemHandler = Callable[[Mapping[str, Any], int, "str | None"], None]


class ResponsesBuilder(MessageBuilder):
    """Builds a transcript from Responses items fed one at a time (static or live, spec L-5).

    ``feed`` appends the entries of a new item (or of a whole Response) and settles earlier
    calls through :meth:`Transcript.update`, never by attribute assignment, so observers see
    every change. It never modifies what it is given. Subclasses (the Codex loader) override
    the ``add_*`` hooks, :meth:`outcome` and :meth:`new_batch_id`.
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<messages>",
        *,
        cwd: str | None = None,
        live: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, cwd=cwd, live=live)
        #: The model of the entries being added (a Response's ``model``, Codex's turn context).
        self.model: str | None = None
        #: How many records were recognised as this format (a source with none is not one).
        self.recognized = 0
        # The calls still waiting for an output, by call id (``_calls`` holds every call).
        self._open: dict[str, ToolCall] = {}
        # Each open call's patch (patch_text), worked out once when the call starts.
        self._patches: dict[str, tuple[ToolCall, str | None]] = {}
        self._batch: str | None = None
        self._response_batch: str | None = None
        self._last_text: AssistantText | None = None
        #: The inline images of the user message being fed (prompt_images), for add_user.
        self._prompt_images: list[ImageData] = []
        # MCP calls awaiting approval, or approved and awaiting their mcp_call, by request id.
        self._approvals: dict[str, ToolCall] = {}
        self._stream: streamed.StreamedResponse | None = None  # the streamed call being fed
        self._unknown_events: set[str] = set()
        self._handlers: dict[str, ItemHandler] = {
            "message": self._message,
            "reasoning": self._reasoning,
            "compaction": self._compaction,
            "compaction_summary": self._compaction,
            **dict.fromkeys(DEFERRED_CALLS, self._deferred_call),
            **dict.fromkeys(HOSTED_CALLS, self._hosted_call),
            **dict.fromkeys(OUTPUTS, self._output),
            APPROVAL_REQUEST: self._approval_request,
            APPROVAL_RESPONSE: self._approval_response,
            **dict.fromkeys(SILENT_ITEMS, _ignore),
        }

    # --- feeding ---------------------------------------------------------------------------

    def feed(self, item: Mapping[str, Any], line: int) -> None:
        """Add one item, a whole Response object or a request ``{"input": ...}``."""
        if streamed.is_stream_event(item):
            self._stream_event(item, line)
            return
        self.end_stream()
        if not isinstance(item, Mapping):
            self.warn("not a JSON object", line)
        elif is_response(item):
            self.feed_response(item, line)
        elif "type" not in item and "input" in item:
            self._feed_request(item, line)
        elif not self.feed_item(item, line):
            self.warn(f"unknown Responses item type {item.get('type')!r} skipped", line)

    def _stream_event(self, event: Mapping[str, Any], line: int) -> None:
        """One event of a streamed call (:mod:`~turnfold.formats.responses_stream`)."""
        self.recognized += 1
        kind = str(event.get("type"))
        if kind == "response.created" or (self._stream is None and kind in streamed.READ
                                           and kind != streamed.ERROR):  # fmt: skip
            self.end_stream()
            self._stream = streamed.StreamedResponse(event, line)
        elif kind == streamed.ERROR:
            # The API ends the stream with it: what came before stays shown, then its words.
            self.end_stream(warn=False)
            self._append(AssistantError(message=streamed.error_text(event)))
        elif kind in streamed.REPEATED:
            return
        elif kind not in streamed.READ:
            if kind not in self._unknown_events:  # one warning per event type, not per event
                self._unknown_events.add(kind)
                self.warn(f"unknown stream event type {kind!r} skipped", line)
        elif self._stream is not None:
            problem = self._stream.add(event)
            if problem:
                self.warn(problem, line)
        if self._stream is not None and self._stream.ended:
            self.end_stream()

    def end_stream(self, *, warn: bool = True) -> streamed.StreamedResponse | None:
        """The streamed call fed last, read as the Response it stands for: whole once its
        terminal event, another call's ``response.created``, an item or the end of the source
        follows. Returned when it ended before its terminal event (cut off), which ``warn``
        says here; the end of the source says it its own way (:func:`read`)."""
        stream, self._stream = self._stream, None
        if stream is None:
            return None
        self.feed_response(stream.response(), stream.line)
        if stream.ended:
            return None
        if warn:
            self.warn(f"the streamed response begun on line {stream.line} ends without "
                      f"{_STREAM_END}: it may be cut off", stream.line)  # fmt: skip
        return stream

    def feed_item(self, item: Mapping[str, Any], line: int, timestamp: str | None = None) -> bool:
        """Add one item; False (and nothing added) when its type is not known."""
        kind = item.get("type")
        if kind is None and "role" in item:
            kind = "message"  # the "easy" input message {role, content}
        handler = self._handlers.get(kind) if type(kind) is str else None
        if handler is None:
            return False
        self.recognized += 1
        handler(item, line, timestamp)
        return True

    def feed_response(self, response: Mapping[str, Any], line: int) -> None:
        """A Response object: its output items are one batch under the response id."""
        self.recognized += 1
        own_id = response.get("id")
        timestamp = warned_unix_timestamp(
            response.get("created_at"), lambda reason: self.warn(reason, line),
            record_named("response", own_id), "created_at",
        )  # fmt: skip
        if isinstance(response.get("model"), str):
            self.model = response["model"]
        self._response_batch = own_id if isinstance(own_id, str) and own_id else f"resp-{line}"
        if isinstance(response.get("instructions"), str):
            self.add_instructions("system", response["instructions"], timestamp, line)
        self._last_text = None
        written = len(self.transcript.entries)
        try:
            for item in as_list(response.get("output")):
                if not isinstance(item, Mapping) or not self.feed_item(item, line, timestamp):
                    kind = item.get("type") if isinstance(item, Mapping) else None
                    self.warn(f"unknown Responses item type {kind!r} skipped", line)
        finally:
            batch, self._response_batch = self._response_batch, None
        # The status first: a failed response with no output carries the usage on its error.
        self._response_status(response, batch, timestamp)
        usage = responses_usage(response.get("usage"))
        if usage is not None:
            usage.response_id = own_id if isinstance(own_id, str) and own_id else None
            entries = self.transcript.entries[written:]
            attach_usage(entries, usage, self.transcript, model=self.model)

    def _feed_request(self, request: Mapping[str, Any], line: int) -> None:
        self.recognized += 1
        self.add_instructions("system", parts_text(request.get("instructions")), None, line)
        items = request.get("input")
        if isinstance(items, str):
            self.add_user(items, {}, None, line, "item")
            return
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, Mapping) or not self.feed_item(item, line):
                kind = item.get("type") if isinstance(item, Mapping) else None
                self.warn(f"unknown Responses item type {kind!r} skipped", line)

    def _response_status(
        self, response: Mapping[str, Any], batch: str, timestamp: str | None
    ) -> None:
        status = response.get("status")
        if status in ("incomplete", "cancelled"):
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, Mapping) else None
            self.cancel_open(timestamp, batch)
            self._append(AbortMarker(reason=reason or status, timestamp=timestamp))
        elif status == "failed":
            error = response.get("error")
            message = error.get("message") if isinstance(error, Mapping) else None
            if isinstance(message, str) and message:
                self._append(AssistantError(message=message, timestamp=timestamp))
            else:
                self._append(failure("reader.response_failed", timestamp=timestamp))

    # --- items -----------------------------------------------------------------------------

    def _message(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        role = item.get("role")
        content = item.get("content")
        if role == "user":
            text = self.prompt_of(content)
            # Handed to add_user beside its arguments: a subclass's add_user (Codex) keeps its
            # own signature and counts the images instead.
            self._prompt_images = prompt_images(content)
            try:
                self.add_user(text, attachment_counts(content), timestamp, line, "item")
            finally:
                self._prompt_images = []
        elif role == "assistant":
            meta: dict[str, Any] = {}
            if isinstance(item.get("phase"), str):
                meta["phase"] = item["phase"]
            if item.get("status") == "incomplete":
                meta["status"] = "incomplete"
            text = parts_text(content)
            if text:
                self.add_assistant(text, timestamp, meta, line, "item")
            refusal = refusal_text(content)
            if refusal:
                self.add_assistant(refusal, timestamp, {**meta, "refusal": True}, line, "item")
        elif role in ("system", "developer"):
            self.add_instructions(role, parts_text(content), timestamp, line)
        else:
            self.warn(f"message with unknown role {role!r} skipped", line)

    def _reasoning(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        thinking, parts = reasoning_thinking(item)
        if thinking is not None:
            thinking.timestamp = timestamp
            self.add_thinking(thinking, parts, line, "item")

    def _compaction(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        self.add_compaction(None, timestamp, "compacted")

    def _deferred_call(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call_id, name, args, status, meta = deferred_call(item, line)
        call = self.start_call(call_id, name, args, line, timestamp, status, meta)
        if status is None:
            self._open[call.call_id] = call

    def _hosted_call(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        kind = str(item.get("type"))
        name, args = _call_name_args(kind, item, HOSTED_CALLS[kind])
        status = _HOSTED_STATUS.get(str(item.get("status")))
        text, images = _hosted_output(kind, item)
        if kind == "mcp_call" and item.get("error"):
            status = "error"
        approved = self._approvals.pop(str(item.get("approval_request_id")), None)
        if approved is not None:  # the call the user approved runs: it settles that call
            result = text_result(text, images=images) if text is not None or images else None
            self.transcript.update(
                approved,
                status=self.open_status if status is None else status,
                result=result,
                ended_at=timestamp,
                meta={**approved.meta, "mcp_call_id": _call_id(item, kind, line)},
            )
            return
        call = self.start_call(
            _call_id(item, kind, line), name, args, line, timestamp, status, _server(item)
        )
        detail = web_search_detail(args) if kind == "web_search_call" else None
        if detail is not None:
            self.transcript.update(call, description=detail)
        if text is not None or images:
            self.transcript.update(call, result=text_result(text, images=images))

    def _approval_request(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """The MCP call the model asked to make, held for the user's approval."""
        name, args = _call_name_args("mcp_call", item, "mcp")
        call_id = _call_id(item, APPROVAL_REQUEST, line)
        call = self.start_call(call_id, name, args, line, timestamp, "confirming", _server(item))
        self._approvals[call_id] = call

    def _approval_response(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """The user's decision on an approval request: a denial cancels its call; an approval
        leaves it to the ``mcp_call`` that follows (not recorded if none does)."""
        self.close_batch()  # the user's answer ends the response that asked
        request_id = item.get("approval_request_id")
        call = self._approvals.get(request_id) if isinstance(request_id, str) else None
        if call is None:
            self.warn(f"{APPROVAL_RESPONSE} for an unknown approval request {request_id!r}", line)
            return
        reason = item.get("reason") if isinstance(item.get("reason"), str) else None
        if item.get("approve") is True:
            meta = {**call.meta, "approval": "approved"}
            self.transcript.update(call, status=self.open_status, meta=meta)
            return
        del self._approvals[call.call_id]
        self.transcript.update(
            call,
            status="cancelled",
            result=worded_result("reader.denied.said", {"said": reason})
            if reason
            else worded_result("reader.denied_by_user"),
            ended_at=timestamp,
            meta={**call.meta, "approval": "denied"},
        )

    def _output(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        kind = str(item.get("type"))
        call_id = item.get("call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        self.close_batch()  # the next call belongs to the next response
        if call is None:
            self.warn(f"{kind} for an unknown call id {call_id!r}", line)
            own_id = call_id if isinstance(call_id, str) and call_id else f"{kind}@{line}"
            call = self.start_call(own_id, OUTPUTS[kind], None, line, timestamp, batch=False)
        value, stated = _stated_output(kind, item)
        self.finish_call(call, value, timestamp)
        if stated is not None and call.status != stated:
            self.transcript.update(call, status=stated)

    # --- hooks the Codex loader overrides --------------------------------------------------

    def prompt_of(self, content: Any) -> str:
        """The text of a user message's content (image tags Codex adds left out), with a line
        naming each attachment it cannot show (:func:`attachment_lines`)."""
        if not isinstance(content, list):
            return parts_text(content)
        content = [p for p in content if not _is_image_tag_part(p)]
        return "\n\n".join(t for t in (parts_text(content), *attachment_lines(content)) if t)

    def add_user(
        self, text: str, counts: Mapping[str, int], timestamp: str | None, line: int, origin: str
    ) -> UserMessage | None:
        """A user's prompt (``origin`` says which record carried it: ``item`` or ``event``),
        with the inline images of the item being fed."""
        text = prompt_text(text, counts)  # one of nothing but an image still reads "[image]"
        if not text:
            return None
        images = self._prompt_images
        message = UserMessage(text=text, images=images, timestamp=timestamp, meta=dict(counts))
        self._append(message)
        return message

    def add_assistant(
        self, text: str, timestamp: str | None, meta: dict[str, Any], line: int, origin: str
    ) -> None:
        self._append(AssistantText(text=text, model=self.model, timestamp=timestamp, meta=meta))

    def add_thinking(self, thinking: Thinking, parts: list[str], line: int, origin: str) -> None:
        self._append(thinking)

    def add_instructions(self, role: str, text: str, timestamp: str | None, line: int) -> None:
        """System and developer messages configure the model: kept in ``metadata["system"]``."""
        previous = self.transcript.metadata.get("system")
        if text and not (isinstance(previous, str) and text in previous):  # requests repeat it
            self.transcript.metadata["system"] = f"{previous}\n\n{text}" if previous else text

    def add_compaction(self, summary: str | None, timestamp: str | None, origin: str) -> None:
        self._append(CompactionBoundary(summary=summary or None, timestamp=timestamp))

    def outcome(self, call: ToolCall, value: Any) -> tuple[ToolStatus, ToolResult, dict[str, Any]]:
        """Status, result and other field changes of ``call`` once its output ``value`` arrives
        (:func:`output_outcome`)."""
        status, result = output_outcome(call, value, self.patch_of(call))
        return status, result, {}

    def new_batch_id(self, line: int) -> str:
        return f"batch-{line}"

    # --- calls and batches -----------------------------------------------------------------

    def start_call(
        self,
        call_id: str,
        name: str,
        args: Any,
        line: int,
        timestamp: str | None,
        status: ToolStatus | None = None,
        meta: dict[str, Any] | None = None,
        *,
        batch: bool = True,
    ) -> ToolCall:
        """Append a call (:func:`new_call`); ``status`` None means still running (live) or not
        recorded (static)."""
        previous = self._open.get(call_id)
        if previous is not None:
            self.warn(f"tool call id {call_id!r} reused before its result arrived", line)
            del self._open[call_id]
        call, patch = new_call(
            call_id,
            name,
            args,
            self.cwd,
            self.open_status if status is None else status,
            self.batch_id(line) if batch else None,
            timestamp,
            meta,
        )
        self._append(call)
        self._calls[call_id] = call
        self._patches[call_id] = (call, patch)
        return call

    def patch_of(self, call: ToolCall) -> str | None:
        """The patch ``call`` applies (:func:`patch_text`), as worked out when it started."""
        known = self._patches.get(call.call_id)
        return (
            known[1] if known is not None and known[0] is call else patch_text(call.name, call.args)
        )

    def finish_call(self, call: ToolCall, value: Any, timestamp: str | None) -> None:
        """Settle ``call`` with its output through :meth:`Transcript.update` (observers see it)."""
        status, result, changes = self.outcome(call, value)
        self._patches.pop(call.call_id, None)
        if self._open.get(call.call_id) is call:
            del self._open[call.call_id]
        self.transcript.update(call, status=status, result=result, ended_at=timestamp, **changes)

    def cancel_open(self, timestamp: str | None, batch: str | None = None) -> None:
        """Calls still waiting for their output were cut off: ``cancelled``.

        A call whose outcome an event already recorded (Codex's exec end) keeps it.
        """
        for call_id, call in list(self._open.items()):
            if batch is None or call.batch_id == batch:
                del self._open[call_id]
                if call.status not in ("success", "error"):
                    self.transcript.update(call, status="cancelled", ended_at=timestamp)

    def batch_id(self, line: int) -> str:
        if self._response_batch is not None:
            return self._response_batch
        if self._batch is None:
            self._batch = self.new_batch_id(line)
        return self._batch

    def close_batch(self) -> None:
        self._batch = None

    def _append(self, entry: Entry) -> Entry:
        if not isinstance(entry, ToolCall):
            self.close_batch()
        if isinstance(entry, AssistantText):
            self._last_text = entry
        return self.transcript.append(entry)


def _server(item: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP item's server (``server_label``) as its call's ``meta``."""
    return {"server": item["server_label"]} if isinstance(item.get("server_label"), str) else {}


def _ignore(item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
    """Bookkeeping items with nothing to show."""


def _is_image_tag_part(part: Any) -> bool:
    return (
        isinstance(part, Mapping)
        and isinstance(part.get("text"), str)
        and is_image_tag(part["text"])
    )


def refusal_text(content: Any) -> str:
    """The text of the ``refusal`` parts of a content list."""
    if not isinstance(content, list):
        return ""
    texts = [
        p["refusal"]
        for p in content
        if isinstance(p, Mapping)
        and p.get("type") == "refusal"
        and isinstance(p.get("refusal"), str)
    ]
    return "\n".join(texts)


def _call_id(item: Mapping[str, Any], kind: str, line: int) -> str:
    """The item's ``call_id``, else its ``id`` (hosted calls have no call id)."""
    value = item.get("call_id")
    if not (isinstance(value, str) and value):
        value = item.get("id")
        if not (isinstance(value, str) and value):
            return f"{kind}@{line}"  # hosted calls of older Codex builds carry no id at all
    return value


def _stated_output(kind: str, item: Mapping[str, Any]) -> tuple[Any, ToolStatus | None]:
    """An output item's value, and the status it states (None: it states none, spec L-3)."""
    if kind == "shell_call_output":
        return _shell_output(item.get("output"))
    if kind == "apply_patch_call_output":
        return item.get("output") or "", _PATCH_STATUS.get(str(item.get("status")))
    if kind == "program_output":
        return item.get("result"), _PROGRAM_STATUS.get(str(item.get("status")))
    return (item["output"] if "output" in item else item.get("tools")), None


def _shell_output(chunks: Any) -> tuple[str, ToolStatus | None]:
    """The shell tool's output chunks (one per command: stdout, stderr and an outcome, an
    exit code or a timeout) as one text; any failing command makes the call an error."""
    texts: list[str] = []
    status: ToolStatus | None = None
    for chunk in chunks if isinstance(chunks, list) else []:
        if not isinstance(chunk, Mapping):
            continue
        texts += [t for t in (chunk.get("stdout"), chunk.get("stderr")) if isinstance(t, str) and t]
        outcome = chunk.get("outcome")
        outcome = outcome if isinstance(outcome, Mapping) else {}
        if outcome.get("type") == "timeout":
            texts.append("(timed out)")
            status = "error"
        elif outcome.get("type") == "exit" and isinstance(outcome.get("exit_code"), int):
            if outcome["exit_code"] != 0:
                texts.append(f"(exit code {outcome['exit_code']})")
                status = "error"
            elif status is None:
                status = "success"
    return "".join(t if t.endswith("\n") else t + "\n" for t in texts).rstrip("\n"), status


def deferred_call(
    item: Mapping[str, Any], line: int
) -> tuple[str, str, Any, ToolStatus | None, dict[str, Any]]:
    """A deferred call item (:data:`DEFERRED_CALLS`) as its call id, tool name, parsed
    arguments, the status the item itself states (``cancelled`` when it was cut off; None: its
    output will tell) and ``meta``."""
    kind = item.get("type")
    name, call_id = item.get("name"), item.get("call_id")
    if kind == "function_call" and type(name) is str and name and type(call_id) is str and call_id:
        # Nearly every call a model makes (issue 22: a run's 500 calls), read as
        # _call_name_args and _call_id read it (its own name, its arguments parsed, its
        # call id) without their dispatch on the type.
        args = parsed_arguments(item.get("arguments"))
    else:
        kind = kind if type(kind) is str else str(kind)
        name, args = _call_name_args(kind, item, DEFERRED_CALLS[kind])
        call_id = _call_id(item, kind, line)
    status: ToolStatus | None = "cancelled" if item.get("status") == "incomplete" else None
    namespace = item.get("namespace")
    meta = {"namespace": namespace} if isinstance(namespace, str) else {}
    return call_id, name, args, status, meta


def _call_name_args(kind: str, item: Mapping[str, Any], default_name: str) -> tuple[str, Any]:
    name = item.get("name")
    name = name if isinstance(name, str) and name else default_name
    if kind in ("function_call", "mcp_call"):
        return name, parsed_arguments(item.get("arguments"))
    if kind == "custom_tool_call":
        return name, parsed_arguments(item.get("input"))
    if kind == "tool_search_call":
        return name, plain_copy(item.get("arguments"))
    if kind in ("local_shell_call", "computer_call", "web_search_call", "shell_call"):
        return name, plain_copy(item.get("action"))
    if kind == "apply_patch_call":
        return name, plain_copy(item.get("operation"))
    if kind == "program":
        return name, {"code": item.get("code")}
    if kind == "file_search_call":
        return name, {"queries": plain_copy(item.get("queries"))}
    if kind == "code_interpreter_call":
        return name, {"code": item.get("code")}
    if kind == "image_generation_call":
        prompt = item.get("revised_prompt")
        return name, {"prompt": prompt} if isinstance(prompt, str) else None
    return name, None


def _hosted_output(kind: str, item: Mapping[str, Any]) -> tuple[str | None, list[ImageData]]:
    if kind == "image_generation_call":
        data = item.get("result")
        return None, [ImageData(media_type="image/png", data=data)] if isinstance(
            data, str
        ) and data else []
    if kind == "code_interpreter_call":
        return output_content(item.get("outputs")) if item.get("outputs") else (None, [])
    if kind == "file_search_call":
        results = item.get("results")
        return (stringify(results), []) if results else (None, [])
    if kind == "mcp_call":
        error = item.get("error")
        return output_content(error if error else item.get("output"))
    if kind == "web_search_call":
        action = item.get("action")
        sources = action.get("sources") if isinstance(action, Mapping) else None
        return (stringify(sources), []) if sources else (None, [])
    return None, []


def web_search_detail(action: Any) -> str | None:
    """What a ``web_search_call`` did, by its ``action``, as Codex says it (codex-rs
    ``core/src/web_search.rs``, ``web_search_action_detail``, the same in 0.171; the action
    shapes are openai-python's ``response_function_web_search``): a search its query (else its
    first query, ``...`` after it when there are more), an opened page its URL, a find in a page
    the pattern and the page. None for another action, or one that names none of them.

    >>> web_search_detail({"type": "find_in_page", "url": "https://a.b/c", "pattern": "TF-X"})
    "'TF-X' in https://a.b/c"
    >>> web_search_detail({"type": "search", "queries": ["codex rollout", "jsonl"]})
    'codex rollout ...'
    """
    if not isinstance(action, Mapping):
        return None

    def said(value: Any) -> str:
        # One line, as every description: a pattern or a query is the model's text and may
        # hold line breaks, after which only its first line would be left.
        return " ".join(value.split()) if isinstance(value, str) else ""

    kind = action.get("type")
    url, pattern = said(action.get("url")), said(action.get("pattern"))
    # openai-python typed the find in a page ``find`` before 2.17.0 (the API's is
    # ``find_in_page``): an item built by those types says so.
    if kind in ("find_in_page", "find"):
        detail = (f"'{pattern}' in {url}" if url else f"'{pattern}'") if pattern else url
    elif kind == "open_page":
        detail = url
    elif kind == "search":
        queries = action.get("queries")
        listed = [said(q) for q in queries] if isinstance(queries, list) else []
        first = listed[0] if listed else ""
        many = len(listed) > 1 and first
        detail = said(action.get("query")) or (f"{first} ..." if many else first)
    else:
        return None
    if not detail:
        return None
    return describe_args(HOSTED_CALLS["web_search_call"], {"description": detail})


# --- detection and reading -------------------------------------------------------------------


def is_response(value: Any) -> bool:
    """A whole Response object: ``object: "response"``, or an ``id`` with an ``output`` list."""
    if not isinstance(value, Mapping) or not isinstance(value.get("output"), list):
        return False
    return value.get("object") == "response" or (
        "type" not in value and isinstance(value.get("id"), str)
    )


def _item_kind(value: Any) -> str | None:
    """``typed`` for a Responses item or Response, ``easy`` for an untyped ``{role, content}``
    message (Chat reads it the same way), None for anything else."""
    if is_response(value):
        return "typed"
    if not isinstance(value, Mapping):
        return None
    kind = value.get("type")
    if kind == "message" and "stop_reason" in value:
        return None  # an Anthropic Messages response (response.model_dump()): no item has one
    if kind is not None:
        return "typed" if kind in ITEM_TYPES else None
    if "role" not in value:
        return None
    content = value.get("content")
    if isinstance(content, list) and any(
        isinstance(p, Mapping) and p.get("type") in _TYPED_PARTS for p in content
    ):
        return "typed"  # input_text / output_text parts are the Responses API's own
    return "easy" if isinstance(content, (str, list)) else None


def looks_like_items(values: list[Any]) -> bool:
    """Every value is a Responses item (easy messages allowed) and one is typed."""
    kinds = [_item_kind(v) for v in values]
    return "typed" in kinds and None not in kinds


def _classify(value: Any) -> int:
    if streamed.is_stream_event(value):
        # An error event alone is a shape other APIs' logs may share.
        return READABLE if value["type"] == streamed.ERROR else DISTINCTIVE
    kind = _item_kind(value)
    return DISTINCTIVE if kind == "typed" else READABLE if kind == "easy" else NOT_MINE


_LACKS = "no typed Responses item"


def detect(source: Source) -> Evidence:
    """A Response object, a request with ``input`` items, or a list of items (bare or wrapped)."""
    document = source.document if source.is_document else None
    if document is None:
        return Evidence.of(source.head_values(), _classify, _LACKS)
    if is_response(document) or _logged_response(document) is not None:
        return Evidence(share=1.0, marks=1)
    batch = batch_line(document)
    if batch is not None:  # its url, or its body, names the API it called
        if batch.endpoint != RESPONSES_URL:
            return Evidence.none("a Batch API line of another endpoint than /v1/responses")
        return Evidence(share=1.0, marks=1)
    items = document.get("input") if isinstance(document, Mapping) else None
    if isinstance(items, list) and "messages" not in document:
        return Evidence.of(sample(items), _classify, _LACKS)
    found = find_messages(document)
    if found is None:
        return Evidence.none("no item list")
    return Evidence.of(sample(found.messages), _classify, _LACKS)


def read(source: Source) -> Transcript:
    """Every record of ``source`` fed to a :class:`ResponsesBuilder` (static: ``live=False``),
    each accounted for by its type (:data:`RECORDS`); an item list inside a wrapper object is
    found by :func:`~turnfold.formats.wrappers.find_messages` and the wrapper's other keys kept."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = ResponsesBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    found = None
    call = _logged_response(document)
    batch = batch_line(document)
    whole = is_response(document) or call is not None or batch is not None
    if isinstance(document, Mapping) and not whole and "input" not in document:
        found = find_messages(document)
    first_line: int | None = None
    if batch is not None:
        first_line = 1
        _batch_line(source, batch, transcript, builder)
    elif call is not None:
        first_line = 1
        builder.feed_noted(source, call.request, 1, "request")
        builder.feed_noted(source, call.response, 2, "response")
        keep_wrapper_keys(transcript, {k: v for k, v in call.request.items()
                                       if k not in _REQUEST_READ})  # fmt: skip
    elif found is not None:
        first_line = 1
        for line, item in enumerate(found.messages, start=1):
            builder.feed_noted(source, item, line, item_record_type(item), ignored=SILENT_ITEMS)
        keep_wrapper_keys(transcript, found.rest)
    else:
        first_line = builder.feed_records(source, item_record_type, ignored=_IGNORED)
        cut = builder.end_stream(warn=False)
        if cut is not None:
            stream_cut_off(source, transcript, cut.line, _STREAM_END)
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first_line, "no Responses API items")
    # A logged call's response names the model that answered, its request the one asked for
    # (an alias: "o4-mini"); the header names the one that answered, once.
    answered = call is not None or (batch is not None and batch.response is not None)
    if builder.model and (answered or "model" not in transcript.metadata):
        transcript.metadata["model"] = builder.model
    return transcript


def _batch_line(
    source: Source, line: BatchLine, transcript: Transcript, builder: ResponsesBuilder
) -> None:
    """A Batch API line of a ``/v1/responses`` call: its request, or its Response after a
    prompt not recorded (the output file keeps no request: its input file's line of the same
    ``custom_id`` does), the line's other keys kept as metadata. A line of another endpoint,
    or a failed call's (which says no endpoint: the Chat format reads it), is refused."""
    if line.endpoint != RESPONSES_URL:
        what = line.endpoint or "failed call's"
        reason = f"{line.custom_id!r} is a Batch API {what} line, not a /v1/responses call's"
        raise TranscriptFormatError(source.name, [NAME], 1, reason)
    if line.request is not None:
        builder.feed_noted(source, line.request, 1, "request")
        keep_wrapper_keys(transcript, {k: v for k, v in line.request.items()
                                       if k not in _REQUEST_READ})  # fmt: skip
        return
    transcript.append(prompt_not_recorded())
    builder.feed_noted(source, line.response, 1, "response")
    keep_wrapper_keys(transcript, line.metadata)


#: The keys of a request its reading takes (the others are kept as metadata).
_REQUEST_READ = ("input", "instructions")
#: What ends a streamed call, as a cut-off stream's warning names it.
_STREAM_END = "response.completed, response.failed or response.incomplete"
#: What a source holds by design and no entry shows: bookkeeping items, a stream's repeats.
_IGNORED = SILENT_ITEMS | streamed.REPEATED


def _logged_response(document: Any) -> Exchange | None:
    """A logged call (:func:`~turnfold.formats.wrappers.exchange`) whose response is a
    Response: the request's instructions and input, then the Response's output."""
    call = exchange(document)
    if call is None or not is_response(call.response) or "input" not in call.request:
        return None
    return call


def item_record_type(record: Any) -> str:
    """An item by its ``type`` (an untyped ``{role, content}`` is a ``message``); a whole
    Response is ``response``, a request ``request``."""
    if is_response(record):
        return "response"
    if isinstance(record, Mapping):
        kind = record.get("type")
        if isinstance(kind, str) and kind:
            return kind
        if "role" in record:
            return "message"
        if "input" in record:
            return "request"
    return type_of_record(record)


_CALL_DOC = "a tool call (ToolCall); its output item settles it"
_OUTPUT_DOC = "the output of the call with its call_id"
_HOSTED_DOC = "a hosted tool's call and its outcome at once (ToolCall)"
#: Every item type, a whole Response and a request; bookkeeping items are ignored by design.
RECORDS = Records(
    mapped={
        "message": "user → UserMessage, assistant → AssistantText, system/developer → "
        'metadata["system"]',
        "reasoning": "Thinking (raw text, summary or encrypted)",
        "compaction": "CompactionBoundary",
        "compaction_summary": "CompactionBoundary",
        **dict.fromkeys(DEFERRED_CALLS, _CALL_DOC),
        **dict.fromkeys(HOSTED_CALLS, _HOSTED_DOC),
        **dict.fromkeys(OUTPUTS, _OUTPUT_DOC),
        APPROVAL_REQUEST: "an MCP call awaiting approval (ToolCall, confirming)",
        APPROVAL_RESPONSE: "the decision on it: a denial cancels the call, an approval leaves it"
        " to the mcp_call with its approval_request_id",
        "response": "its output items as one batch; usage, status and instructions",
        "request": "its instructions and input items; a logged call's response (beside "
        "them, or the request under request) read after them as a response",
        **dict.fromkeys(
            sorted(streamed.READ - {streamed.ERROR}),
            "a streamed call's event: the events of one "
            "response are put together into the Response they stand for, read as above",
        ),
        streamed.ERROR: "an error the API streamed: an AssistantError of its words",
    },
    ignored={
        **dict.fromkeys(
            sorted(streamed.REPEATED),
            "a streamed call's event repeating what its item's "
            "response.output_item.done holds whole",
        ),
        "item_reference": "a pointer to an item stored elsewhere, no content",
        "mcp_list_tools": "the tools an MCP server offers, no step of the conversation",
        "additional_tools": "tools added to the conversation, no step of it",
        "compaction_trigger": "a request to compact, no content (a compaction item follows)",
    },
)
