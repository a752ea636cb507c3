"""Cursor agent transcripts (issue 11).

Cursor (the IDE's agent and the ``cursor-agent`` CLI) writes each agent session as JSON lines to
``~/.cursor/projects/<encoded-workspace>/agent-transcripts/<session-id>/<session-id>.jsonl``;
a sub-agent's run is a file of the same shape in ``<session-id>/subagents/``. (Older builds wrote
a plain-text ``<session-id>.txt``, which this loader does not read.) Lines:

- ``{"role": "user", "message": {"content": [{"type": "text", "text": ...}]}}``: the user's text
  is wrapped in ``<user_query>…</user_query>``, next to context Cursor adds (a ``<timestamp>``,
  attached files, rules);
- ``{"role": "assistant", "message": {"content": [...]}}`` with Anthropic-shaped blocks:
  ``text``, ``thinking`` and ``tool_use`` ``{name, input}`` (no ``id``);
- ``{"type": "turn_ended", "status": "success" | "error", "error": ...}`` after a turn.

The format records no ids, no timestamps (but the prompt's ``<timestamp>`` tag), no model, no
token usage and **no tool results**: Cursor leaves tool output out of the file.

Mapping:

- a user line → :class:`UserMessage` with the text inside ``<user_query>`` (the whole text when
  there is no such tag); the rest of the text (Cursor's context) goes to ``meta["context"]``,
  and a ``<timestamp>`` Cursor writes as ``Sunday, Aug 2, 2026, 3:51 AM (UTC-7)`` (or ISO-8601)
  becomes the prompt's ``timestamp`` (kept as ``meta["timestamp_text"]`` when unreadable);
- an assistant line's blocks become entries in order: ``text`` → :class:`AssistantText` (a text
  that is only ``[REDACTED]``, Cursor's stand-in for reasoning it does not write, is a
  :class:`Thinking` ``form="redacted"``), ``thinking`` → :class:`Thinking`, ``tool_use`` →
  :class:`ToolCall` (``call_id`` ``cursor-<line>.<n>`` when the block has no ``id``; the calls
  of a line are one batch). A ``tool_result`` block, should one appear, settles its call by
  ``tool_use_id`` as in Anthropic messages;
- calls without a result stay ``unknown`` (spec L-3): ``metadata["tool_results"]`` is
  ``"not recorded"`` and a closing :class:`SystemNotice` says so;
- ``turn_ended`` with ``status: "error"`` → :class:`AbortMarker` when the user aborted the
  request, else :class:`AssistantError` with the error; ``success`` is left out by design;
- a sub-agent file in ``subagents/`` becomes the :class:`SubAgent` transcript of the call whose
  ``prompt`` (or ``description``) is the sub-agent's first prompt; a file no call matches is
  named in a warning.

``cursor-agent -p --output-format stream-json`` prints the same session as events, one a line,
each with ``type`` (and ``subtype``) and ``session_id``; unlike the transcript they hold the
tools' results:

- ``system/init`` → metadata: ``session_id``, ``model`` (the display name: ``Auto``, ``Claude 4
  Sonnet``), ``cwd``, ``agent`` ``cursor``;
- ``user`` → the prompt, as a user line above;
- ``assistant`` → :class:`AssistantText`: consecutive events are one text (with
  ``--stream-partial-output`` each event is a piece of it, and some versions end the pieces with
  the whole text once more, which is then the text);
- ``thinking/delta`` → consecutive deltas are one :class:`Thinking`; ``thinking/completed``
  only marks its end;
- ``tool_call/started`` → a :class:`ToolCall` (``call_id`` as written, a newline in it too), its
  kind the one key of ``tool_call``: ``shellToolCall`` is ``Shell``, ``readToolCall`` ``Read``
  (:data:`_TOOL_NAMES`; another ``<x>ToolCall`` is ``X``), ``mcpToolCall`` its ``toolName``,
  ``function`` its ``name``; the calls of one ``model_call_id`` are one batch;
- ``tool_call/completed`` settles the call by ``call_id``: ``result.success`` is ``success`` (a
  shell command's non-zero ``exitCode``, an MCP result's ``isError``: ``error``), ``error`` and
  ``rejected`` (refused by the permission rules) are ``error``; a call never completed stays
  ``unknown``;
- ``result`` → ``outcome`` (``pass``, ``error`` when ``is_error`` or another subtype, as Claude
  Code's ``result`` reads), ``duration_ms`` and the run's ``usage`` (``inputTokens`` without the
  cached ones), also on the run's last text.

Detection: lines with a top-level ``role`` and ``message.content`` (Claude Code's lines carry a
``type`` and their role inside ``message``; Chat Completions messages carry ``content`` at the
top), ``turn_ended`` lines, and stream events: ``tool_call`` and ``thinking`` events, an init
with ``apiKeySource`` but no ``tools`` list (Claude Code's has one), and messages and results
without Claude Code's ``parent_tool_use_id`` and ``uuid``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from turnfold.formats import anthropic_blocks as blocks
from turnfold.formats.agents.cline import ms_to_iso
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    as_int,
    checked_timestamp,
    describe_args,
    parse_arguments,
    stringify,
    text_result,
    usage_from,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine
from turnfold.formats.source import Source, open_source, sibling_files, type_of_record
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    Entry,
    LoadWarning,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    UserMessage,
)
from turnfold.usage import add_into, attach_usage, counts_of

NAME = "cursor"

RECORDS = Records(
    mapped={
        "user": "a prompt (UserMessage): the text of <user_query>, Cursor's context in meta",
        "assistant": "text, thinking and tool calls in order (a transcript's outcomes unknown: "
        "no results); stream-json: text, consecutive events joined",
        "turn_ended/error": "AbortMarker when the user aborted, else AssistantError",
        "system/init": "stream-json: metadata: session id, model, working folder",
        "thinking/delta": "stream-json: thinking, consecutive deltas joined",
        "tool_call/started": "stream-json: a tool call (one batch per model_call_id)",
        "tool_call/completed": "stream-json: settles its call by call_id: status and result",
        "result": "stream-json: outcome, duration and usage (metadata; the usage also on the "
        "run's last text); a failure as an error",
    },
    ignored={
        "turn_ended/success": "a turn that ended normally: the next prompt starts the next turn",
        "thinking/completed": "stream-json: the end of a thinking phase, whose deltas hold it",
    },
)

_ROLES = NameSet({"user", "assistant"})
_REDACTED = "[REDACTED]"
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*(?:</user_query>|\Z)", re.DOTALL)
_TIMESTAMP = re.compile(r"<timestamp>\s*(.*?)\s*</timestamp>", re.DOTALL)
# "Sunday, Aug 2, 2026, 3:51 AM (UTC-7)": the form Cursor writes in the prompt's tag.
_HUMAN_TIME = re.compile(
    r"(?:\w+, )?(?P<date>\w+ \d{1,2}, \d{4}), (?P<time>\d{1,2}:\d{2}(?::\d{2})? [AP]M)"
    r"(?: \(UTC(?:(?P<sign>[+-])(?P<hours>\d{1,2})(?::(?P<minutes>\d{2}))?)?\))?"
)
_SUBAGENT_TASK_KEYS = ("prompt", "description", "task")
_STREAM_TYPES = NameSet({"system", "user", "assistant", "thinking", "tool_call", "result"})
_SUBTYPED = NameSet({"system", "thinking", "tool_call"})  # their record types name the subtype
#: cursor-agent's tool kinds (the key inside ``tool_call``) by the names tools.py knows.
_TOOL_NAMES = {
    "shellToolCall": "Shell",
    "readToolCall": "Read",
    "writeToolCall": "Write",
    "editToolCall": "Edit",
    "lsToolCall": "LS",
    "globToolCall": "Glob",
    "grepToolCall": "Grep",
    "deleteToolCall": "Delete",
    "todoToolCall": "TodoWrite",
    "updateTodosToolCall": "TodoWrite",
}
NO_RESULTS = "Cursor transcripts do not record tool results: the outcome of every call is unknown."


def _is_line(value: Any) -> bool:
    """A user or assistant line: top-level ``role``, the blocks in ``message.content``."""
    if not isinstance(value, Mapping) or "type" in value or "content" in value:
        return False
    message = value.get("message")
    return (
        value.get("role") in _ROLES
        and isinstance(message, Mapping)
        and isinstance(message.get("content"), (list, str))
    )


def _is_turn_end(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "turn_ended" and "role" not in value


def _stream_kind(value: Any) -> str | None:
    """A stream-json event's record type (``tool_call/started``), None for anything else."""
    if not isinstance(value, Mapping) or "role" in value:
        return None
    kind = value.get("type")
    if kind not in _STREAM_TYPES:
        return None
    subtype = value.get("subtype")
    if kind in _SUBTYPED and isinstance(subtype, str) and subtype:
        return f"{kind}/{subtype}"
    return str(kind)


def _stream_verdict(value: Mapping[str, Any], kind: str) -> int:
    if "parent_tool_use_id" in value or "uuid" in value:  # Claude Code's stream-json
        return NOT_MINE
    if kind.startswith("tool_call/"):
        return DISTINCTIVE if isinstance(value.get("tool_call"), Mapping) else NOT_MINE
    if kind in ("thinking/delta", "thinking/completed"):
        return DISTINCTIVE
    if kind == "system/init":
        return DISTINCTIVE if "apiKeySource" in value and "tools" not in value else NOT_MINE
    if kind in _ROLES:
        if not isinstance(value.get("message"), Mapping):
            return NOT_MINE
        return DISTINCTIVE if "model_call_id" in value or "timestamp_ms" in value else READABLE
    if kind == "result":
        return DISTINCTIVE if "request_id" in value and "total_cost_usd" not in value else READABLE
    return NOT_MINE


def _classify(value: Any) -> int:
    if _is_line(value) or _is_turn_end(value):
        return DISTINCTIVE
    kind = _stream_kind(value)
    return NOT_MINE if kind is None else _stream_verdict(value, kind)


def detect(source: Source) -> Evidence:
    """Cursor's ``{role, message: {content}}`` lines (JSONL, or a JSON list of them)."""
    document = source.document if source.is_document else None
    if isinstance(document, Mapping):
        return Evidence.of([document], _classify, "no {role, message: {content}} line")
    return Evidence.of(source.head_values(), _classify, "no {role, message: {content}} line")


def prompt_parts(text: str) -> tuple[str, str, str | None]:
    """A user line's text as (the user's query, Cursor's context around it, the timestamp tag).

    >>> prompt_parts("<timestamp>2026-08-02T10:51:00Z</timestamp><user_query>hi</user_query>")
    ('hi', '', '2026-08-02T10:51:00Z')
    """
    stamp = _TIMESTAMP.search(text)
    queries = _QUERY.findall(text)
    if not queries:
        return text.strip(), "", stamp.group(1) if stamp else None
    rest = _TIMESTAMP.sub("", _QUERY.sub("", text)).strip()
    return "\n\n".join(q for q in queries if q), rest, stamp.group(1) if stamp else None


def parse_timestamp(text: str) -> str | None:
    """The prompt's ``<timestamp>`` as ISO-8601: ISO as it is, Cursor's spelled-out form with
    its UTC offset; None when it reads as neither (never a guessed time, spec L-3).

    >>> parse_timestamp("Sunday, Aug 2, 2026, 3:51 AM (UTC-7)")
    '2026-08-02T03:51:00-07:00'
    """
    iso = checked_timestamp(text)
    if iso is not None:
        return iso
    match = _HUMAN_TIME.fullmatch(text.strip())
    if match is None or match.group("sign") is None:
        return None  # without an offset the moment is unknown
    for layout in ("%b %d, %Y %I:%M %p", "%B %d, %Y %I:%M %p", "%b %d, %Y %I:%M:%S %p"):
        try:
            moment = datetime.strptime(f"{match['date']} {match['time']}", layout)
        except ValueError:
            continue
        sign = -1 if match["sign"] == "-" else 1
        offset = timedelta(hours=int(match["hours"]), minutes=int(match["minutes"] or 0))
        return moment.replace(tzinfo=timezone(sign * offset)).isoformat()
    return None


class CursorReader:
    """Reads one Cursor transcript's lines into a transcript, accounting for each line."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.transcript = Transcript(metadata={"source_format": NAME})
        self.calls: dict[str, ToolCall] = {}
        self._unknown_blocks: set[str] = set()
        self.streamed = False  # cursor-agent's stream-json: its events record the results
        self._pieces: list[str] = []  # the assistant events of the text being streamed
        self._thoughts: list[str] = []  # the thinking deltas of the thought being streamed
        self._thought_at: str | None = None
        self._run: list[Entry] = []  # the entries since the last result: whose usage it gives

    def read(self) -> Transcript:
        for line, record in self.source.records():
            self.record(record, line)
        self._close_text()
        self._close_thought()
        if self.streamed:
            return self.transcript
        if self.calls and all(c.result is None for c in self.calls.values()):
            self.transcript.metadata["tool_results"] = "not recorded"
            self.transcript.append(SystemNotice(text=NO_RESULTS, subtype="no_tool_results"))
        return self.transcript

    def record(self, record: Any, line: int) -> None:
        """One line, noted as mapped, ignored or warned before the next is read."""
        warnings = self.transcript.warnings
        before = len(warnings)
        kind = self._read_line(record, line)
        if kind is None:
            return  # already accounted for (a warning naming it)
        if len(warnings) > before:
            self.source.note(kind, "warned")
        else:
            self.source.note(kind, RECORDS.disposition(kind) or "mapped")

    def _read_line(self, record: Any, line: int) -> str | None:
        if isinstance(record, MalformedLine):
            self.warn(record.reason, line)
            return type_of_record(record)
        if _is_turn_end(record):
            return self._turn_end(record, line)
        kind = _stream_kind(record)
        if kind is not None:
            return self._event(record, kind, line)
        if not _is_line(record):
            kind = type_of_record(record)
            self.warn(f"not a Cursor transcript line ({kind}) skipped", line)
            return kind
        content = record["message"]["content"]
        content = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if record["role"] == "user":
            self._user(content, line)
        else:
            self._assistant(content, line)
        return str(record["role"])

    # --- lines --------------------------------------------------------------------------------

    def _user(self, content: list[Any], line: int) -> None:
        texts: list[str] = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                if isinstance(block.get("text"), str):
                    texts.append(block["text"])
            elif isinstance(block, Mapping) and blocks.is_result_block(block):
                self._settle(block, line)
            else:
                self._unknown(block, line)
        if not texts:
            return
        query, context, stamp = prompt_parts("\n\n".join(texts))
        meta: dict[str, Any] = {"context": context} if context else {}
        timestamp = parse_timestamp(stamp) if stamp else None
        if stamp and timestamp is None:
            meta["timestamp_text"] = stamp
        if query or context:
            self.transcript.append(UserMessage(text=query, timestamp=timestamp, meta=meta))

    def _assistant(self, content: list[Any], line: int) -> None:
        batch = f"msg-{line}"
        for index, block in enumerate(content):
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if text.strip() == _REDACTED:
                    self.transcript.append(Thinking(form="redacted"))
                elif text.strip():
                    self.transcript.append(AssistantText(text=text))
            elif kind in ("thinking", "redacted_thinking"):
                thinking = blocks.thinking_of(block)
                if thinking is not None:
                    self.transcript.append(thinking)
            elif kind in blocks.CALL_TYPES:
                self._call(block, f"cursor-{line}.{index}", batch, line)
            elif isinstance(block, Mapping) and blocks.is_result_block(block):
                self._settle(block, line)
            else:
                self._unknown(block, line)

    def _call(self, block: Mapping[str, Any], default_id: str, batch: str, line: int) -> None:
        call = blocks.call_of(block, cwd=None, batch_id=batch, status="unknown")
        if not call.call_id or call.call_id in self.calls:
            call.call_id = default_id  # Cursor writes no ids; the line and position are stable
        self.calls[call.call_id] = call
        self.transcript.append(call)

    def _settle(self, block: Mapping[str, Any], line: int) -> None:
        call_id = block.get("tool_use_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"{block.get('type')} for an unknown tool_use_id {call_id!r}", line)
            return
        status, result = blocks.result_of(block)
        self.transcript.update(call, status=status, result=result)

    def _turn_end(self, record: Mapping[str, Any], line: int) -> str:
        status = record.get("status")
        kind = f"turn_ended/{status}"
        if status == "success":
            return kind
        if status != "error":
            self.warn(f"turn_ended with an unknown status {status!r}", line)
            return kind
        error = record.get("error")
        text = error if isinstance(error, str) and error.strip() else None
        if text is not None and "abort" in text.lower():
            self.transcript.append(AbortMarker(reason=text))
        else:
            self.transcript.append(AssistantError(message=text or "The turn ended with an error."))
        return kind

    # --- stream-json events -------------------------------------------------------------------

    def _event(self, record: Mapping[str, Any], kind: str, line: int) -> str:
        """One event of cursor-agent's stream-json, its record type for the accounting."""
        self.streamed = True
        if kind == "assistant":
            self._close_thought()
            message = record.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            self._pieces.append(_text_of_blocks(content))
            return kind
        if kind == "thinking/delta":
            self._close_text()
            text = record.get("text")
            if not self._thoughts:
                self._thought_at = ms_to_iso(record.get("timestamp_ms"))
            self._thoughts.append(text if isinstance(text, str) else "")
            return kind
        self._close_text()
        self._close_thought()
        if kind == "system/init":
            self._init(record)
        elif kind == "user":
            message = record.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            if isinstance(content, list):
                self._user(content, line)
            else:
                self.warn("user event without a message", line)
        elif kind == "tool_call/started":
            self._started(record)
        elif kind == "tool_call/completed":
            self._completed(record, line)
        elif kind == "result":
            self._result(record)
        elif kind != "thinking/completed":
            self.warn(f"unknown cursor-agent stream-json event {kind!r} skipped", line)
        return kind

    def _append(self, entry: Entry) -> None:
        self._run.append(self.transcript.append(entry))

    def _close_text(self) -> None:
        """The text being streamed ends; its pieces are one text, unless the last piece is the
        whole text again (some versions end ``--stream-partial-output`` so)."""
        pieces, self._pieces = self._pieces, []
        if len(pieces) > 1 and pieces[-1] == "".join(pieces[:-1]):
            pieces = pieces[-1:]
        text = "".join(pieces)
        if text.strip():
            self._append(AssistantText(text=text))

    def _close_thought(self) -> None:
        thoughts, self._thoughts = self._thoughts, []
        if "".join(thoughts).strip():
            self._append(Thinking(text="".join(thoughts), timestamp=self._thought_at))

    def _init(self, record: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        meta["agent"] = "cursor"
        for key in ("session_id", "model", "cwd"):
            value = record.get(key)
            if isinstance(value, str) and value:
                meta.setdefault(key, value)

    def _started(self, record: Mapping[str, Any]) -> None:
        call_id = record.get("call_id")
        call_id = call_id if isinstance(call_id, str) and call_id else f"cursor-{len(self.calls)}"
        key, body = _tool_of(record.get("tool_call"))
        name, args = _name_and_args(key, body)
        batch = record.get("model_call_id")
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args, self.transcript.metadata.get("cwd")),
            status="unknown",  # until its completed event
            batch_id=batch if isinstance(batch, str) and batch else None,
            started_at=ms_to_iso(record.get("timestamp_ms")),
            meta={"cursor_tool": key} if key else {},
        )
        self.calls[call_id] = call
        self._append(call)

    def _completed(self, record: Mapping[str, Any], line: int) -> None:
        call_id = record.get("call_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"tool_call completed for an unknown call_id {call_id!r}", line)
            return
        _, body = _tool_of(record.get("tool_call"))
        status, text = _outcome(body.get("result"))
        ended = ms_to_iso(record.get("timestamp_ms"))
        changes: dict[str, Any] = {"status": status, "ended_at": ended}
        if text:
            changes["result"] = text_result(text)
        self.transcript.update(call, **changes)

    def _result(self, record: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        failed = record.get("is_error") is True or record.get("subtype") != "success"
        meta["outcome"] = "error" if failed else "pass"
        duration = as_int(record.get("duration_ms"))
        if duration is not None:
            meta["duration_ms"] = meta.get("duration_ms", 0) + duration
        usage = usage_from(
            record.get("usage"),
            cache_apart=True,  # Cursor counts the cached input apart (cacheReadTokens > input)
            input_tokens="inputTokens",
            output_tokens="outputTokens",
            cache_read_tokens="cacheReadTokens",
            cache_write_tokens="cacheWriteTokens",
        )
        if usage is not None:
            attach_usage(self._run, usage, self.transcript)
            totals: dict[str, int] = meta.setdefault("usage", {})
            add_into(totals, counts_of(usage))
        if failed:
            text = record.get("result")
            said = text if isinstance(text, str) and text.strip() else None
            self.transcript.append(AssistantError(message=said or "The run ended with an error."))
        self._run = []

    # --- helpers ------------------------------------------------------------------------------

    def _unknown(self, block: Any, line: int) -> None:
        kind = str(block.get("type")) if isinstance(block, Mapping) else type(block).__name__
        if kind not in self._unknown_blocks:  # one warning per block type, not per block
            self._unknown_blocks.add(kind)
            self.warn(f"unknown content block type {kind!r} skipped", line)

    def warn(self, reason: str, line: int | None) -> None:
        """A problem with the input, in order with the loader's other warnings (spec L-4)."""
        self.transcript.warnings.append(
            LoadWarning(reason=reason, line=line, source=self.source.name)
        )


def _text_of_blocks(content: Any) -> str:
    """The text of an event's content blocks (or of a content string)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _tool_of(tool_call: Any) -> tuple[str, Mapping[str, Any]]:
    """The tool kind (``shellToolCall``) and its body, from an event's ``tool_call``."""
    if isinstance(tool_call, Mapping):
        for key, body in tool_call.items():
            if isinstance(body, Mapping) and (key.endswith("ToolCall") or key == "function"):
                return key, body
    return "", {}


def _name_and_args(key: str, body: Mapping[str, Any]) -> tuple[str, Any]:
    if key == "function":
        name = body.get("name")
        return (name if isinstance(name, str) else ""), parse_arguments(body.get("arguments"))
    args = body.get("args")
    if key == "mcpToolCall" and isinstance(args, Mapping):
        name = args.get("toolName") or args.get("name")
        return (name if isinstance(name, str) else key), args.get("args")
    if key in _TOOL_NAMES:
        return _TOOL_NAMES[key], args
    base = key.removesuffix("ToolCall")
    return (base[:1].upper() + base[1:]) or key, args


def _outcome(result: Any) -> tuple[ToolStatus, str | None]:
    """A completed call's status and result text, from its ``result``."""
    if not isinstance(result, Mapping):
        return "unknown", None
    success = result.get("success")
    if isinstance(success, Mapping):
        exit_code = as_int(success.get("exitCode"))
        failed = (exit_code is not None and exit_code != 0) or success.get("isError") is True
        return ("error" if failed else "success"), _success_text(success)
    failure = result.get("error")
    if failure is not None:
        return "error", _reason(failure) or stringify(failure)
    refusal = result.get("rejected")
    if refusal is not None:  # refused by the permission rules: the tool did not run
        reason = _reason(refusal)
        return "error", f"Rejected: {reason}" if reason else "Rejected: the tool did not run."
    return "unknown", stringify(result)


def _reason(value: Any) -> str | None:
    """What a failure or refusal says: the text itself, or its reason, message or error."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, Mapping):
        for key in ("reason", "message", "error"):
            text = value.get(key)
            if isinstance(text, str) and text.strip():
                return text.strip()
    return None


def _success_text(success: Mapping[str, Any]) -> str | None:
    """What a successful call returned: a command's output, a file's content, an MCP tool's
    text; other tools' results (a write's path and size) as they are."""
    if "exitCode" in success or "stdout" in success:
        output = success.get("interleavedOutput")
        if not isinstance(output, str) or not output:
            parts = (success.get("stdout"), success.get("stderr"))
            output = "\n".join(p for p in parts if isinstance(p, str) and p)
        return output or None
    content = success.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # an MCP result: [{"text": {"text": ...}}]
        texts = []
        for part in content:
            text = part.get("text") if isinstance(part, Mapping) else None
            text = text.get("text") if isinstance(text, Mapping) else text
            if isinstance(text, str):
                texts.append(text)
        if texts:
            return "\n".join(texts)
    return stringify(success)


# --- reading --------------------------------------------------------------------------------------


def read(source: Source) -> Transcript:
    """A Cursor transcript, with the sub-agent transcripts in ``subagents/`` beside it."""
    transcript = CursorReader(source).read()
    if source.path is not None:
        _attach_subagents(source, transcript, source.path.parent / "subagents")
    return transcript


def _first_prompt(transcript: Transcript) -> str | None:
    return next((e.text for e in transcript if isinstance(e, UserMessage)), None)


def _task_of(call: ToolCall) -> str | None:
    args = call.args if isinstance(call.args, Mapping) else {}
    return next((args[k] for k in _SUBAGENT_TASK_KEYS if isinstance(args.get(k), str)), None)


def _attach_subagents(source: Source, transcript: Transcript, folder: Path) -> None:
    """Each sub-agent file becomes the transcript of the call that handed it its prompt.

    Cursor records no link but the text: the sub-agent's first prompt is the call's
    ``prompt``. Each call takes at most one file, in file-name order.
    """
    if not folder.is_dir():
        return
    open_calls = [c for c in transcript.tool_calls() if _task_of(c) is not None]
    for path in sibling_files(folder, "*.jsonl"):
        try:
            child_source, stream = open_source(path)
        except OSError as exc:
            source.warn(f"sub-agent transcript {path.name} could not be read: {exc.strerror}")
            continue
        try:
            child = CursorReader(child_source).read()
        finally:
            if stream is not None:
                stream.close()
        source.accounting.merge(child_source.accounting)  # nothing of the child file unaccounted
        transcript.warnings.extend(child.warnings)
        prompt = (_first_prompt(child) or "").strip()
        matches = (c for c in open_calls if (_task_of(c) or "").strip() == prompt)
        call = next(matches, None) if prompt else None
        if call is None:
            source.warn(f"sub-agent transcript {path.name} matches no call's prompt; not shown")
            continue
        open_calls.remove(call)
        child.metadata["agent_id"] = path.stem
        tools = len(child.tool_calls())
        agent = SubAgent(
            task=_task_of(call), transcript=child, agent_id=path.stem, tool_count=tools
        )
        transcript.update(call, subagent=agent)
