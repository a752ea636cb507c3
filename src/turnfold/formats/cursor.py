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
- ``{"type": "turn_ended", "status": "success" | "error" | "aborted", "error": ...}`` after a
  turn (``aborted`` when the user stopped it: ``"error": "User aborted/interrupted
  manually."``).

The format records no ids, no timestamps (but the prompt's ``<timestamp>`` tag), no model, no
token usage and **no tool results**: Cursor leaves tool output out of the file.
``metadata["agent"]`` is ``cursor``, as the stream-json reader's.

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
- ``turn_ended`` with ``status: "aborted"`` → :class:`AbortMarker` (its ``error`` the reason);
  with ``status: "error"`` → :class:`AbortMarker` when the user aborted the
  request, else :class:`AssistantError` with the error; ``success`` is left out by design;
- a sub-agent file in ``subagents/`` becomes the :class:`SubAgent` transcript of the call whose
  ``prompt`` (or ``description``) is the sub-agent's first prompt; a file no call matches is
  named in a warning.

``cursor-agent -p --output-format stream-json`` prints a session as events, with the tools'
results: the ``cursor-stream-json`` format (:mod:`turnfold.formats.agents.cursor_stream`).

Detection: lines with a top-level ``role`` and ``message.content`` (Claude Code's lines carry a
``type`` and their role inside ``message``; Chat Completions messages carry ``content`` at the
top) and ``turn_ended`` lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from turnfold.formats import anthropic_blocks as blocks
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    checked_timestamp,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine
from turnfold.formats.source import (
    Source,
    join_warnings,
    keep_warning,
    open_source,
    sibling_files,
    type_of_record,
    warning_count,
)
from turnfold.formats.wording import failure, notice, stop, worded
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    LoadWarning,
    SubAgent,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)

NAME = "cursor"
#: What Cursor keeps its tokens in (both programs are closed source: where each writes is
#: what the programs that read them back find there). The ``cursor-agent`` CLI's login,
#: ``auth.json`` ``{accessToken, refreshToken, apiKey}``: ``$XDG_CONFIG_HOME/cursor`` on
#: Linux, ``~/.cursor`` on macOS (beside its Keychain), ``%APPDATA%\\Cursor`` on Windows
#: (cnwinds/cursor-pulse 2b87f0f5 ``docs/cursor-usage-api.md:55-71``). The
#: IDE's ``User/globalStorage/state.vscdb`` of its data folder (``~/.config/Cursor``,
#: ``~/Library/Application Support/Cursor``, ``%APPDATA%\\Cursor``): VS Code's ``ItemTable``,
#: where Cursor keeps ``cursorAuth/accessToken`` and ``cursorAuth/refreshToken`` beside its
#: chats (``cursorDiskKV``), and the copy VS Code keeps of it (``toBackupPath``,
#: microsoft/vscode ``src/vs/base/parts/storage/node/storage.ts``: ``<path>.backup``). This
#: reader reads neither database: its sessions are the agent transcripts, so no chat of the
#: IDE's is shown, and no scan or load opens the file that holds its tokens. A workspace's
#: ``User/workspaceStorage/<id>/state.vscdb`` is no such file: VS Code keeps every secret in
#: the application's storage, the global one (``BaseSecretStorageService`` stores each
#: ``secret://`` key with ``StorageScope.APPLICATION``, microsoft/vscode
#: ``src/vs/platform/secrets/common/secrets.ts``), and Cursor its login there too; a
#: workspace's holds its chats' list and prompts (``composer.composerData``,
#: ``aiService.prompts``: pppp606/cursor-efficiency ``docs/vscdbRelation.md``, yfge/TalkReplay
#: ``docs/cursor-storage.md``). It is a file like any other: a scan counts it skipped
#: unopened (no reader's suffix), a load says it is no transcript. The MCP servers' config,
#: ``mcp.json`` of ``~/.cursor`` and of a project's ``.cursor``, holds their ``env`` and
#: ``headers``, API keys and bearer tokens (Cursor's MCP documentation, cursor.com/docs/mcp).
CREDENTIALS = Credentials(
    folders=frozenset({"cursor", ".cursor", "Cursor"}),
    files=frozenset({
        "auth.json", "mcp.json", "User/globalStorage/state.vscdb",
        "User/globalStorage/state.vscdb.backup",
    }),
)  # fmt: skip

RECORDS = Records(
    mapped={
        "user": "a prompt (UserMessage): the text of <user_query>, Cursor's context in meta",
        "assistant": "text, thinking and tool calls in order (their outcomes unknown: no results)",
        "turn_ended/error": "AbortMarker when the user aborted, else AssistantError",
        "turn_ended/aborted": "AbortMarker: the user stopped the turn (its error the reason)",
    },
    ignored={
        "turn_ended/success": "a turn that ended normally: the next prompt starts the next turn",
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
#: cursor-agent's tool kinds (the key inside ``tool_call``) by the names tools.py knows.
#: What the notice of a transcript without tool results says, in English (its stored text).
NO_RESULTS = worded("reader.no_tool_results")[0]


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


def _classify(value: Any) -> int:
    return DISTINCTIVE if _is_line(value) or _is_turn_end(value) else NOT_MINE


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


def prompt_of(texts: list[str]) -> UserMessage | None:
    """The prompt a user line's texts (or a stream's ``user`` event's) hold: the user's query,
    Cursor's context around it in ``meta["context"]``, its ``<timestamp>`` as the time; None
    when they hold neither query nor context."""
    if not texts:
        return None
    query, context, stamp = prompt_parts("\n\n".join(texts))
    meta: dict[str, Any] = {"context": context} if context else {}
    timestamp = parse_timestamp(stamp) if stamp else None
    if stamp and timestamp is None:
        meta["timestamp_text"] = stamp
    return UserMessage(text=query, timestamp=timestamp, meta=meta) if query or context else None


class CursorReader:
    """Reads one Cursor transcript's lines into a transcript, accounting for each line."""

    def __init__(self, source: Source) -> None:
        self.source = source
        # The agent named as the stream-json reader names it: a corpus's agent column (and its
        # filter) holds Cursor's transcripts and streams alike.
        self.transcript = Transcript(metadata={"source_format": NAME, "agent": "cursor"})
        self.calls: dict[str, ToolCall] = {}
        self._unknown_blocks: set[str] = set()

    def read(self) -> Transcript:
        for line, record in self.source.records():
            self.record(record, line)
        if self.calls and all(c.result is None for c in self.calls.values()):
            self.transcript.metadata["tool_results"] = "not recorded"
            self.transcript.append(notice("reader.no_tool_results", subtype="no_tool_results"))
        return self.transcript

    def record(self, record: Any, line: int) -> None:
        """One line, noted as mapped, ignored or warned before the next is read."""
        warnings = self.transcript.warnings
        before = warning_count(warnings)
        kind = self._read_line(record, line)
        if kind is None:
            return  # already accounted for (a warning naming it)
        if warning_count(warnings) > before:
            self.source.note(kind, "warned")
        else:
            self.source.note(kind, RECORDS.disposition(kind) or "mapped")

    def _read_line(self, record: Any, line: int) -> str | None:
        if isinstance(record, MalformedLine):
            self.warn(record.reason, line)
            return type_of_record(record)
        if _is_turn_end(record):
            return self._turn_end(record, line)
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
        prompt = prompt_of(texts)
        if prompt is not None:
            said = prompt.meta.get("timestamp_text")  # a <timestamp> that reads as no time
            if said is not None:
                warned_timestamp(said, parse_timestamp, lambda reason: self.warn(reason, line),
                                 "the prompt", name="<timestamp>")  # fmt: skip
            self.transcript.append(prompt)

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
        if status not in ("error", "aborted"):
            self.warn(f"turn_ended with an unknown status {status!r}", line)
            return kind
        error = record.get("error")
        text = error if isinstance(error, str) and error.strip() else None
        if status == "aborted":  # the user stopped the turn (Escape)
            self.transcript.append(
                AbortMarker(reason=text) if text else stop("reader.stopped_by_user")
            )
        elif text is not None and "abort" in text.lower():
            self.transcript.append(AbortMarker(reason=text))
        else:
            self.transcript.append(
                AssistantError(message=text) if text else failure("reader.turn_ended_with_error")
            )
        return kind

    # --- helpers ------------------------------------------------------------------------------

    def _unknown(self, block: Any, line: int) -> None:
        kind = str(block.get("type")) if isinstance(block, Mapping) else type(block).__name__
        if kind not in self._unknown_blocks:  # one warning per block type, not per block
            self._unknown_blocks.add(kind)
            self.warn(f"unknown content block type {kind!r} skipped", line)

    def warn(self, reason: str, line: int | None) -> None:
        """A problem with the input, in order with the loader's other warnings (spec L-4)."""
        keep_warning(
            self.transcript.warnings, LoadWarning(reason=reason, line=line, source=self.source.name)
        )


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
    for path in sibling_files(folder, "*.jsonl", source.warn_not_listed("sub-agent transcripts")):
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
        join_warnings(transcript.warnings, child.warnings)
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
