"""What ``cursor-agent -p --output-format stream-json`` prints (spec H-5): a session of the
``cursor`` format's transcripts as events, one a line, each with ``type`` (and ``subtype``) and
``session_id``; unlike the transcript they hold the tools' results:

- ``system/init`` → metadata: ``session_id``, ``model`` (the display name: ``Auto``, ``Claude 4
  Sonnet``), ``cwd``, ``agent`` ``cursor``;
- ``user`` → the prompt, read as a transcript's user line is (:func:`~turnfold.formats.
  cursor.prompt_of`: the text of ``<user_query>``, Cursor's context in ``meta``);
- ``assistant`` → :class:`AssistantText`: consecutive events are one text (with
  ``--stream-partial-output`` each event is a piece of it, and some versions end the pieces with
  the whole text once more, which is then the text), timed by its first event's
  ``timestamp_ms``; a ``tool_call`` event's ``timestamp_ms`` is its call's start (and moment) or
  end; one that is no time is left out, said on its line;
- ``thinking/delta`` → consecutive deltas are one :class:`Thinking`; ``thinking/completed``
  only marks its end;
- ``tool_call/started`` → a :class:`ToolCall` (``call_id`` as written, a newline in it too), its
  kind the one key of ``tool_call``: ``shellToolCall`` is ``Shell``, ``readToolCall`` ``Read``
  (:data:`_TOOL_NAMES`; another ``<x>ToolCall`` is ``X``), ``mcpToolCall`` its ``toolName``,
  ``function`` its ``name``; the calls of one ``model_call_id`` are one batch;
- ``tool_call/completed`` settles the call by ``call_id``. Its ``result`` is a protobuf oneof
  whose one key names the outcome: ``success`` is ``success`` (a shell command's non-zero
  ``exitCode``, an MCP result's ``isError``: ``error``), as are the tool-specific ``complete``,
  ``registered``, ``startSuccess``, ``saveSuccess`` and ``discardSuccess``; ``failure`` (a
  command that failed, with its output), ``error``, ``rejected`` (refused by the permission
  rules), ``timeout``, ``spawnError``, ``fileNotFound``, ``permissionDenied`` and the other
  failures of 2026.08's CLI are ``error``, their text named by the outcome; ``approved``,
  ``async``, ``stillRunning`` and ``needsConfirmation`` (not finished) and a key not known
  stay ``unknown``, as does a call never completed;
- ``result`` → ``outcome`` (``pass``, ``error`` when ``is_error`` or another subtype, as Claude
  Code's ``result`` reads), ``duration_ms`` and the run's ``usage`` (``inputTokens`` without the
  cached ones), also on the run's last text. A stream that ends after a ``system/init`` without
  its run's ``result`` (the process was killed, its output cut off) is read by the rule every
  agent's headless stream shares (:func:`~turnfold.formats.common.stream_cut_off`): a warning,
  the run ``incomplete``, its turn stopped;
- the runtime's own events (2026.08's CLI) → :class:`SystemNotice`: ``retry/starting`` and
  ``retry/resuming`` (a request retried, the run resumed: warnings with the attempt),
  ``connection/reconnecting`` (a warning), ``system/task_notification`` (a background task's
  title and detail), ``system/background_shell_timeout`` (background commands aborted: a
  warning); ``interaction_query`` (the CLI's own permission query, answered at once in print
  mode) and ``connection/reconnected`` are ignored (``RECORDS``).

Detection: ``tool_call`` and ``thinking`` events, an init with ``apiKeySource`` but no
``tools`` list (Claude Code's has one), and messages and results without Claude Code's
``parent_tool_use_id`` and ``uuid``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from turnfold.formats.agents.cline import ms_to_iso
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    as_int,
    describe_args,
    parse_arguments,
    stream_cut_off,
    stringify,
    text_result,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.cursor import prompt_of
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.protocol import read_events
from turnfold.formats.source import Source, type_of_record
from turnfold.formats.wording import failure
from turnfold.formats.wording import notice as worded_notice
from turnfold.formats.wording import result as worded_result
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
)
from turnfold.usage import add_into, attach_usage, counts_of

NAME = "cursor-stream-json"

RECORDS = Records(
    mapped={
        "system/init": "metadata: session id, model, working folder",
        "user": "a prompt (UserMessage): the text of <user_query>, Cursor's context in meta",
        "assistant": "text, consecutive events joined",
        "thinking/delta": "thinking, consecutive deltas joined",
        "tool_call/started": "a tool call (one batch per model_call_id)",
        "tool_call/completed": "settles its call by call_id: status and result",
        "result": "outcome, duration and usage (metadata; the usage also on the run's last "
        "text); a failure as an error",
        "retry/starting": "warning notice: the request retried (its attempt)",
        "retry/resuming": "warning notice: the run resumed from its checkpoint (its attempt)",
        "connection/reconnecting": "warning notice: the connection lost, reconnecting",
        "system/task_notification": "notice: a background task's title and detail",
        "system/background_shell_timeout": "warning notice: background commands aborted",
    },
    ignored={
        "thinking/completed": "the end of a thinking phase, whose deltas hold it",
        "interaction_query/request": "the CLI's own query (a permission) to itself, answered "
        "at once in print mode; the call's outcome shows what was decided",
        "interaction_query/response": "the answer to the CLI's own query",
        "connection/reconnected": "the connection back, after its reconnecting notice",
    },
)

_ROLES = NameSet({"user", "assistant"})
_STREAM_TYPES = NameSet({
    "system", "user", "assistant", "thinking", "tool_call", "result",
    "interaction_query", "retry", "connection",  # newer CLIs (2026.08)
})  # fmt: skip
#: Their record types name the subtype.
_SUBTYPED = NameSet({"system", "thinking", "tool_call", "interaction_query", "retry",
                     "connection"})  # fmt: skip
_LACKS = "no cursor-agent stream-json event"

#: The tools a ``<x>ToolCall`` key names, as Cursor's transcripts name them.
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


def stream_kind(value: Any) -> str | None:
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


def _verdict(value: Mapping[str, Any], kind: str) -> int:
    if "parent_tool_use_id" in value or "uuid" in value:  # Claude Code's stream-json
        return NOT_MINE
    if kind.startswith("tool_call/"):
        return DISTINCTIVE if isinstance(value.get("tool_call"), Mapping) else NOT_MINE
    if kind in ("thinking/delta", "thinking/completed"):
        return DISTINCTIVE
    if kind == "system/init":
        return DISTINCTIVE if "apiKeySource" in value and "tools" not in value else NOT_MINE
    if kind.startswith("interaction_query/"):
        return DISTINCTIVE
    if kind in _NOTICES:  # Claude Code's stream-json has a task_notification too
        return READABLE
    if kind in _ROLES:
        if not isinstance(value.get("message"), Mapping):
            return NOT_MINE
        return DISTINCTIVE if "model_call_id" in value or "timestamp_ms" in value else READABLE
    if kind == "result":
        return DISTINCTIVE if "request_id" in value and "total_cost_usd" not in value else READABLE
    return NOT_MINE


def _classify(value: Any) -> int:
    kind = stream_kind(value)
    return NOT_MINE if kind is None else _verdict(value, kind)


def detect(source: Source) -> Evidence:
    """cursor-agent's stream-json events: JSON lines, or one JSON array of them."""
    return Evidence.of_events(source, _classify, _LACKS)


class _Reader:
    """Reads one stream's events into a transcript, accounting for each event."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.transcript = Transcript(metadata={"source_format": NAME})
        self.calls: dict[str, ToolCall] = {}
        self._pieces: list[str] = []  # the assistant events of the text being streamed
        self._text_at: str | None = None
        self._thoughts: list[str] = []  # the thinking deltas of the thought being streamed
        self._thought_at: str | None = None
        self._run: list[Entry] = []  # the entries since the last result: whose usage it gives
        self._kind = ""  # the record type of the event being read
        self._warned = False  # whether it was warned of (and so accounted for)
        #: The line of the ``system/init`` whose run has no ``result`` yet: a stream that ends
        #: with one set was cut off inside that run.
        self.open_run: int | None = None

    def event(self, record: Mapping[str, Any], line: int) -> None:
        """One event, noted as mapped, ignored or warned before the next is read."""
        kind = stream_kind(record)
        if kind is None:
            name = type_of_record(record)
            self.source.warn(f"not a cursor-agent stream-json event ({name}) skipped", line,
                             record_type=name)  # fmt: skip
            return
        self._kind, self._warned = kind, False
        self._event(record, kind, line)
        if not self._warned:
            self.source.note(kind, RECORDS.disposition(kind) or "mapped")

    def _warn(self, reason: str, line: int) -> None:
        """A problem with the current event, which accounts for it as warned, once: a
        warning on its line would otherwise count it under its ``type`` alone, and the event
        again under its record type."""
        self.source.warn(reason, line, record_type=None if self._warned else self._kind)
        self._warned = True

    def finish(self) -> Transcript:
        """The stream ended: the text and thinking being streamed are closed, and a stream
        cut off inside a run says so (:func:`~turnfold.formats.common.stream_cut_off`)."""
        self._close_text()
        self._close_thought()
        if self.open_run is not None:
            stream_cut_off(self.source, self.transcript, self.open_run, "result")
        return self.transcript

    def _event(self, record: Mapping[str, Any], kind: str, line: int) -> None:
        if kind == "assistant":
            self._close_thought()
            message = record.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            stamp = self._stamp(record, line)
            if not self._pieces:
                self._text_at = stamp
            self._pieces.append(_text_of_blocks(content))
            return
        if kind == "thinking/delta":
            self._close_text()
            text = record.get("text")
            stamp = self._stamp(record, line)
            if not self._thoughts:
                self._thought_at = stamp
            self._thoughts.append(text if isinstance(text, str) else "")
            return
        self._close_text()
        self._close_thought()
        if kind == "system/init":
            self.open_run = line
            self._init(record)
        elif kind == "user":
            message = record.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            if isinstance(content, (str, list)):
                self._prompt(content, line)
            else:
                self._warn("user event without a message", line)
        elif kind == "tool_call/started":
            self._started(record, line)
        elif kind == "tool_call/completed":
            self._completed(record, line)
        elif kind == "result":
            self.open_run = None
            self._result(record)
        elif kind in _NOTICES:
            self._append(_NOTICES[kind](record, self._stamp(record, line)))
        elif RECORDS.disposition(kind) != "ignored":
            self._warn(f"unknown cursor-agent stream-json event {kind!r} skipped", line)

    def _prompt(self, content: str | list[Any], line: int) -> None:
        """The prompt of a ``user`` event: its text, read as a transcript's user line is."""
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = [b["text"] for b in blocks if _is_text_block(b)]
        if len(texts) < len(blocks):
            self._warn("a user event's block that is no text skipped", line)
        prompt = prompt_of(texts)
        if prompt is not None:
            self._append(prompt)

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
            self._append(AssistantText(text=text, timestamp=self._text_at))

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

    def _stamp(self, record: Mapping[str, Any], line: int) -> str | None:
        """The event's ``timestamp_ms``; one that is no time is left out and said on its line,
        naming the event (and its call), which is still read (``common.warned_timestamp``)."""
        what = f"the {self._kind} event"
        call_id = record.get("call_id")
        if self._kind.startswith("tool_call/") and isinstance(call_id, str) and call_id:
            what = f"the {self._kind} event of call {call_id[:80]!r}"
        return warned_timestamp(record.get("timestamp_ms"), ms_to_iso,
                                lambda reason: self._warn(reason, line), what,
                                name="timestamp_ms", unit="ms since the epoch")  # fmt: skip

    def _started(self, record: Mapping[str, Any], line: int) -> None:
        call_id = record.get("call_id")
        call_id = call_id if isinstance(call_id, str) and call_id else f"cursor-{len(self.calls)}"
        key, body = _tool_of(record.get("tool_call"))
        name, args = _name_and_args(key, body)
        batch = record.get("model_call_id")
        started = self._stamp(record, line)
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args, self.transcript.metadata.get("cwd")),
            status="unknown",  # until its completed event
            batch_id=batch if isinstance(batch, str) and batch else None,
            timestamp=started,  # the moment of the call, as the session's time span reads it
            started_at=started,
            meta={"cursor_tool": key} if key else {},
        )
        self.calls[call_id] = call
        self._append(call)

    def _completed(self, record: Mapping[str, Any], line: int) -> None:
        call_id = record.get("call_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self._warn(f"tool_call completed for an unknown call_id {call_id!r}", line)
            return
        _, body = _tool_of(record.get("tool_call"))
        status, text = _outcome(body.get("result"))
        ended = self._stamp(record, line)
        changes: dict[str, Any] = {"status": status, "ended_at": ended}
        if text:
            changes["result"] = text if isinstance(text, ToolResult) else text_result(text)
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
            self.transcript.append(
                AssistantError(message=said) if said else failure("reader.run_ended_with_error")
            )
        self._run = []


def _attempted(
    key: str, record: Mapping[str, Any], subtype: str, stamp: str | None
) -> SystemNotice:
    """The notice ``key``, with ``.attempt`` where the record numbers its attempt."""
    attempt = as_int(record.get("attempt"))
    return worded_notice(key + (".attempt" if attempt is not None else ""),
                         {"attempt": attempt}, level="warning", subtype=subtype,
                         timestamp=stamp)  # fmt: skip


def _retrying(record: Mapping[str, Any], stamp: str | None) -> SystemNotice:
    resumed = record.get("subtype") == "resuming"
    key = "reader.resuming" if resumed else "reader.retrying_request"
    return _attempted(key, record, "retry", stamp)


def _reconnecting(record: Mapping[str, Any], stamp: str | None) -> SystemNotice:
    return _attempted("reader.reconnecting", record, "connection", stamp)


def _task_notification(record: Mapping[str, Any], stamp: str | None) -> SystemNotice:
    said = [record.get(k) for k in ("title", "detail")]
    text = "\n".join(t for t in said if isinstance(t, str) and t.strip())
    if not text:
        return worded_notice("reader.task_reported", subtype="task_notification", timestamp=stamp)
    return SystemNotice(text=text, subtype="task_notification", timestamp=stamp)


def _shell_timeout(record: Mapping[str, Any], stamp: str | None) -> SystemNotice:
    count, limit = as_int(record.get("aborted_count")), as_int(record.get("timeout_ms"))
    key = "reader.background_aborted" + (".count" if count is not None else "")
    key += ".timeout" if limit is not None else ""
    seconds = f"{limit / 1000:g}" if limit is not None else None
    return worded_notice(key, {"count": count, "seconds": seconds}, level="warning",
                         subtype="background_shell_timeout", timestamp=stamp)  # fmt: skip


#: The runtime's events shown as notices (the run was not the model's to say), each given its
#: event and its time.
_NOTICES: dict[str, Callable[[Mapping[str, Any], str | None], SystemNotice]] = {
    "retry/starting": _retrying,
    "retry/resuming": _retrying,
    "connection/reconnecting": _reconnecting,
    "system/task_notification": _task_notification,
    "system/background_shell_timeout": _shell_timeout,
}


def _is_text_block(block: Any) -> bool:
    return (
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _text_of_blocks(content: Any) -> str:
    """The text of an event's content blocks (or of a content string)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(b["text"] for b in content if _is_text_block(b))


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


#: A completed call's ``result`` is a protobuf oneof: one key names its outcome. These mean the
#: tool did its work (a ``success`` command's non-zero ``exitCode`` aside)...
_DONE = NameSet({"success", "complete", "registered", "startSuccess", "saveSuccess",
                 "discardSuccess"})  # fmt: skip
#: ... these that it failed or did not run (``rejected``: refused by the permission rules) ...
_FAILED = NameSet({
    "failure", "error", "rejected", "timeout", "spawnError", "permissionDenied",
    "readPermissionDenied", "writePermissionDenied", "fileNotFound", "invalidFile", "notFile",
    "fileBusy", "noSpace", "sandboxUnsupported", "notFound", "serverNotFound", "toolNotFound",
})  # fmt: skip
#: ... and these that it had not finished (still running, waiting for an answer): unknown.
_UNFINISHED = NameSet({"approved", "async", "stillRunning", "needsConfirmation"})


def _outcome(result: Any) -> tuple[ToolStatus, str | ToolResult | None]:
    """A completed call's status and result text, from its ``result``: the outcome key, with
    other keys beside it (``pid``, ``isBackground``) left out. Another key keeps the call
    ``unknown``, the result shown as it is. A refusal is said in the reader's words."""
    if not isinstance(result, Mapping):
        return "unknown", None
    outcome = next((k for k in result if k in _DONE or k in _FAILED or k in _UNFINISHED), None)
    body = result.get(outcome) if outcome is not None else None
    if outcome == "success" and isinstance(body, Mapping):
        exit_code = as_int(body.get("exitCode"))
        failed = (exit_code is not None and exit_code != 0) or body.get("isError") is True
        return ("error" if failed else "success"), _success_text(body)
    if outcome in _DONE:
        return "success", _success_text(body) if isinstance(body, Mapping) and body else None
    if outcome == "rejected":  # the tool did not run
        reason = _reason(body)
        refused = worded_result("reader.tool_rejected.said", {"said": reason}) if reason else None
        return "error", refused or worded_result("reader.tool_rejected")
    if outcome in ("error", "failure"):
        # A command that ran and failed (``failure``) holds its output and exit code.
        if isinstance(body, Mapping) and ("exitCode" in body or "stdout" in body):
            return "error", _success_text(body) or _reason(body) or stringify(body)
        return "error", _reason(body) or stringify(body)
    if outcome is not None:
        # What failed (``fileNotFound``: the path) means little without the outcome's name.
        said = _reason(body) or (stringify(body) if body else None)
        status: ToolStatus = "error" if outcome in _FAILED else "unknown"
        return status, f"{outcome}: {said}" if said else outcome
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


def read(source: Source) -> Transcript:
    """Every event in order; a ``completed`` event settles the call its ``call_id`` names."""
    reader = _Reader(source)
    read_events(source, reader.event, "a stream-json event")
    return reader.finish()
