"""Codex CLI rollout JSONL (spec L-2.3): ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Layouts:

- current: one ``{"timestamp", "type", "payload"}`` envelope per line, ``type`` one of
  ``session_meta``, ``turn_context``, ``response_item``, ``event_msg``, ``compacted`` (newer
  builds add ``world_state`` and ``inter_agent_communication*``, read as bookkeeping);
- legacy (mid-2025): a bare ``{"id", "timestamp", "instructions", "git"}`` first line, then bare
  Responses items and ``{"record_type": "state"}`` lines, without timestamps.

``response_item`` payloads are Responses API items, converted by
:class:`~turnfold.formats.openai_responses.ResponsesBuilder`; this module adds what Codex knows
beyond the API (:class:`CodexBuilder`):

- **User prompts.** ``event_msg/user_message`` and the ``response_item`` user message carry the
  same text: one :class:`UserMessage` is kept, whichever came first. Injected context is not a
  prompt and is dropped: developer/system messages, ``# AGENTS.md instructions``,
  ``<environment_context>``, ``<user_instructions>``, ``<permissions instructions>``,
  ``<turn_aborted>`` and the other ``<snake_case>…</snake_case>`` fragments Codex wraps its
  context in. ``<user_shell_command>`` (a command the user ran with ``!``) becomes a
  ``user_initiated`` ``shell`` :class:`ToolCall` (spec F-14). An IDE prompt keeps only the text
  after ``## My request for Codex:`` (the editor context goes to ``meta["ide_context"]``).
- **Assistant text and reasoning** come from the ``response_item``; ``agent_message`` and
  ``agent_reasoning`` events that repeat them are dropped (an event with no item copy is kept).
- **Tool calls** pair with their outputs by ``call_id``. Codex records no error flag, so the
  status is derived (spec L-3): an exit code in the output (``{"output", "metadata":
  {"exit_code"}}`` JSON, or an ``Exit code: N`` / ``Process exited with code N`` header) gives
  ``success`` when 0 and ``error`` otherwise; otherwise ``exec_command_end.exit_code``,
  ``patch_apply_end.success``, ``mcp_tool_call_end`` (``Ok`` / ``Err`` / ``isError``) and
  ``dynamic_tool_call_response.success`` decide; an output of ``aborted`` is ``cancelled``;
  anything else stays ``unknown``. The header is taken off the shown output and kept in
  ``meta["output_header"]`` (``meta["exit_code"]`` too); ``Wall time`` / ``duration_seconds`` /
  an event's ``duration`` is the recorded ``duration_ms``. ``apply_patch`` results are diffs
  (``patch_apply_end``'s unified diffs when recorded, else the patch itself); ``update_plan``
  results are plans. Events only enrich calls still waiting for their output; an event for a
  call that is not in the file echoes nothing and is skipped.
- **Batches.** Codex items carry no response id: consecutive calls form one batch,
  ``turn<n>-batch<k>``, ended by any message, reasoning or output.
- **Turns.** ``task_started`` / ``turn_started`` (or, in files without them, a new prompt) start
  a turn. ``turn_aborted`` → :class:`AbortMarker`, and the turn's calls still waiting for an
  output become ``cancelled``. ``task_complete.duration_ms`` (and ``time_to_first_token_ms``)
  go to the ``meta`` (``turn_duration_ms``) of the turn's last :class:`AssistantText`, else of
  its :class:`UserMessage`; their sum is ``metadata["duration_ms"]``. A zero turn duration is a
  placeholder, not a recording. ``task_complete.error`` and ``error`` events are
  :class:`AssistantError`.
- **Usage.** ``token_count.info.last_token_usage`` goes on the AssistantText written since the
  previous ``token_count`` (the text of that model response), when there is one;
  ``total_token_usage`` (cumulative) becomes ``metadata["usage"]``.
- **Compaction.** ``compacted`` (its ``message`` is the summary; ``replacement_history`` replays
  earlier items and is not shown again) and ``event_msg/context_compacted`` → one
  :class:`CompactionBoundary` when nothing lies between them, as does a remote ``compaction``
  item.
- **Session.** The first ``session_meta`` gives ``metadata``: ``session_id``, ``started_at``,
  ``cwd``, ``version`` (and ``cli_version``), ``originator``, ``source``, ``model_provider``,
  ``git``, ``forked_from_id``; for a sub-agent's own rollout (``source.subagent``) also
  ``subagent``, ``parent_session_id``, ``agent_name``, ``agent_role``. Later ``session_meta``
  lines mark a resume or fork and are skipped. ``turn_context.model`` is ``metadata["model"]``
  (the first) and each AssistantText's ``model``; ``thread_name_updated`` is the ``title``.
- **Sub-agents.** A ``spawn_agent`` call carries a :class:`SubAgent` (task from its arguments;
  thread id and nickname from its output and ``collab_agent_spawn_end``). When the rollout is a
  file, the child's own rollout beside it (``rollout-*-<thread id>.jsonl``) is loaded as the
  sub-agent's transcript, with its tool count, duration and output tokens.
- **Notices.** ``warning``, ``stream_error``, ``background_event``, ``deprecation_notice``,
  review mode (``entered_review_mode`` / ``exited_review_mode`` with its findings),
  ``thread_rolled_back`` and ``undo_completed`` → :class:`SystemNotice`; inter-agent
  ``agent_message`` items → SystemNotice ``inter_agent``.

Skipped silently, as bookkeeping or UI echoes of items already read: ``world_state``,
``inter_agent_communication*``, ``{"record_type": "state"}``, ``ghost_snapshot`` items, and the
events in :data:`SILENT_EVENTS` (deltas, ``*_begin``, approvals, ``item_*``, ``collab_*`` other
than the spawn, ``web_search_end``, ``image_generation_end`` …). Other unknown event and record
types get one warning per type; unknown ``response_item`` types one warning per line (they may
hold model-visible content); placeholder timestamps one warning in all.

A source with no Codex record at all (say a Claude Code session read with ``format="codex"``)
raises :class:`TranscriptFormatError` rather than returning an empty transcript.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from turnfold.formats.common import (
    NameSet,
    as_int,
    checked_timestamp,
    describe_args,
    text_result,
    usage_from,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.openai_responses import (
    ResponsesBuilder,
    output_content,
    parts_text,
    plain_copy,
    prompt_text,
    reasoning_thinking,
    tool_result,
)
from turnfold.formats.source import Source, open_source
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    Entry,
    SubAgent,
    SystemNotice,
    Thinking,
    ThinkingForm,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)

NAME = "codex"

ENVELOPE_TYPES = NameSet(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)
SILENT_RECORDS = NameSet(
    {"world_state", "inter_agent_communication", "inter_agent_communication_metadata"}
)
#: Events that are UI bookkeeping or echo an item this loader already reads.
SILENT_EVENTS = NameSet(
    {
        "agent_message_delta", "agent_message_content_delta", "agent_reasoning_delta",
        "agent_reasoning_raw_content_delta", "agent_reasoning_section_break", "plan_delta",
        "reasoning_content_delta", "reasoning_raw_content_delta", "exec_command_begin",
        "exec_command_output_delta", "terminal_interaction", "patch_apply_begin",
        "mcp_tool_call_begin", "web_search_begin", "web_search_end", "image_generation_begin",
        "image_generation_end", "view_image_tool_call", "dynamic_tool_call_request",
        "collab_agent_spawn_begin", "collab_agent_interaction_begin",
        "collab_agent_interaction_end", "collab_waiting_begin", "collab_waiting_end",
        "collab_close_begin", "collab_close_end", "exec_approval_request",
        "apply_patch_approval_request", "request_user_input", "elicitation_request",
        "guardian_assessment", "item_started", "item_completed", "raw_response_item",
        "session_configured", "thread_settings_applied", "thread_goal_updated",
        "sub_agent_activity", "mcp_startup_update", "mcp_startup_complete", "turn_diff",
        "plan_update", "undo_started", "shutdown_complete", "get_history_entry_response",
        "mcp_list_tools_response", "list_custom_prompts_response", "list_skills_response",
        "model_reroute",
    }
)  # fmt: skip
_NOTICE_EVENTS: dict[str, Literal["info", "warning"]] = {
    "warning": "warning",
    "stream_error": "warning",
    "deprecation_notice": "warning",
    "background_event": "info",
}

#: Tags Codex wraps injected context in (user- or developer-role messages, never prompts).
_CONTEXT_TAGS = NameSet(
    {
        "environment_context", "user_instructions", "permissions instructions", "INSTRUCTIONS",
        "turn_aborted", "subagent_notification", "skill", "collaboration_mode", "model_switch",
        "personality_spec", "apps_instructions", "plugins_instructions", "skills_instructions",
        "recommended_plugins", "goal_context", "hook_prompt", "context_window",
        "context_window_guidance", "token_budget", "rollout_budget", "additional_context",
        "internal_model_context", "multi_agent_mode", "environments_instructions", "tools",
    }
)  # fmt: skip
_AGENTS_MD = "# AGENTS.md instructions"
_IDE_CONTEXT = "# Context from my IDE setup:"
_IDE_REQUEST = "## My request for Codex:"
_SPAWN_TOOLS = NameSet({"spawn_agent"})
_FINISHED = NameSet({"success", "error", "cancelled"})

_HEADER_START = (
    "Exit code: ", "Command: ", "Chunk ID: ", "Wall time: ", "Process exited with code ",
    "Process running with session ID ",
)  # fmt: skip
_HEADER_LIMIT = 4096  # a header is a few short lines; never scan a large output for one
_EXIT_CODE = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)", re.MULTILINE)
_WALL_TIME = re.compile(r"^(?:Wall time|Duration): ([0-9]+(?:\.[0-9]+)?) seconds", re.MULTILINE)
_SHELL_COMMAND = re.compile(r"<command>\n?(.*?)\n?</command>", re.DOTALL)
_SHELL_RESULT = re.compile(r"<result>\n?(.*)</result>", re.DOTALL)
_IMAGE_PLACEHOLDER = re.compile(r"\[Image #\d+\]")
_SAFE_ID = re.compile(r"^[0-9A-Za-z_-]{1,80}$")  # a thread id is safe to put in a glob
_ECHO_WINDOW = 8
_MAX_SUBAGENT_DEPTH = 4


# --- output headers and injected context -------------------------------------------------------


@dataclass(frozen=True)
class ExecOutput:
    """A command's output with the header Codex puts before it taken apart."""

    body: str
    exit_code: int | None
    duration_ms: float | None
    header: str | None


def exec_output(text: str) -> ExecOutput | None:
    """The exit code, wall time and body of a Codex tool output, or None if it has no header.

    >>> exec_output("Exit code: 2\\nWall time: 1.5 seconds\\nOutput:\\nboom").exit_code
    2
    """
    if text.startswith("{"):
        return _json_exec_output(text)
    if not text.startswith(_HEADER_START):
        return None
    marker = text.find("Output:\n", 0, _HEADER_LIMIT)
    while marker > 0 and text[marker - 1] != "\n":
        marker = text.find("Output:\n", marker + 1, _HEADER_LIMIT)
    if marker < 0:
        if len(text) > _HEADER_LIMIT:
            return None
        header, body = text, ""
    else:
        header, body = text[:marker], text[marker + len("Output:\n") :]
    code = _EXIT_CODE.search(header)
    wall = _WALL_TIME.search(header)
    return ExecOutput(
        body=body,
        exit_code=int(code.group(1)) if code else None,
        duration_ms=float(wall.group(1)) * 1000 if wall else None,
        header=header.rstrip("\n") or None,
    )


def _json_exec_output(text: str) -> ExecOutput | None:
    # {"output": "...", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}: the metadata is
    # the small last key, so only outputs ending in it are worth parsing.
    if '"metadata"' not in text[-200:]:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return None
    metadata = value.get("metadata")
    if not isinstance(metadata, dict):
        return None
    seconds = metadata.get("duration_seconds")
    duration = seconds * 1000 if isinstance(seconds, (int, float)) and seconds >= 0 else None
    return ExecOutput(value["output"], as_int(metadata.get("exit_code")), duration, None)


def is_injected_context(text: str) -> bool:
    """Whether a user-role message is context Codex injected rather than something typed."""
    stripped = text.strip()
    if stripped.startswith(_AGENTS_MD):
        return True
    if not stripped.startswith("<"):
        return False
    end = stripped.find(">", 1, 120)
    if end < 0:
        return False
    tag = stripped[1:end]
    name = tag.split(" ", 1)[0]
    if tag in _CONTEXT_TAGS or name in _CONTEXT_TAGS:
        return True
    # Newer fragments follow the same <snake_case>…</snake_case> shape; a typed prompt that is
    # one such element and nothing else is the (accepted) false positive.
    return "_" in name and stripped.endswith(f"</{name}>")


def user_shell_command(text: str) -> tuple[str, str] | None:
    """``(command, result)`` of a ``<user_shell_command>`` record, or None."""
    stripped = text.strip()
    if not stripped.startswith("<user_shell_command>"):
        return None
    command = _SHELL_COMMAND.search(stripped)
    result = _SHELL_RESULT.search(stripped)
    return (
        command.group(1).strip() if command else "",
        result.group(1) if result else "",
    )


def _echo_key(text: str) -> str:
    """Text compared across the item and event copies of one message."""
    if "[Image #" in text:
        text = _IMAGE_PLACEHOLDER.sub("", text)
    return " ".join(text.split())


def codex_usage(usage: Any) -> Usage | None:
    """A Codex ``*_token_usage`` object as :class:`Usage`."""
    return usage_from(
        usage,
        input_tokens="input_tokens",
        output_tokens="output_tokens",
        cache_read_tokens="cached_input_tokens",
        cache_write_tokens="cache_write_input_tokens",
        reasoning_tokens="reasoning_output_tokens",
    )


def _duration_ms(value: Any) -> float | None:
    """``{"secs": 1, "nanos": 5e8}`` as milliseconds."""
    if not isinstance(value, Mapping):
        return None
    secs, nanos = value.get("secs"), value.get("nanos")
    if not isinstance(secs, (int, float)) or not isinstance(nanos, (int, float)):
        return None
    return secs * 1000 + nanos / 1e6 if secs >= 0 and nanos >= 0 else None


def changes_diff(changes: Any) -> str | None:
    """``patch_apply_end.changes`` as one unified diff (both of Codex's encodings)."""
    if not isinstance(changes, Mapping):
        return None
    parts: list[str] = []
    for path, change in changes.items():
        if not isinstance(change, Mapping):
            continue
        kind = change.get("type")
        if kind is None and len(change) == 1:  # older: {"update": {...}}
            kind, change = next(iter(change.items()))
            change = change if isinstance(change, Mapping) else {}
        parts.append(_file_diff(str(path), str(kind), change))
    text = "".join(p for p in parts if p)
    return text or None


def _file_diff(path: str, kind: str, change: Mapping[str, Any]) -> str:
    if kind == "update":
        diff = change.get("unified_diff")
        if not isinstance(diff, str) or not diff:
            return ""
        target = change.get("move_path") if isinstance(change.get("move_path"), str) else path
        head = "" if diff.startswith("---") else f"--- a/{path}\n+++ b/{target}\n"
        return head + diff + ("" if diff.endswith("\n") else "\n")
    content = change.get("content")
    if kind not in ("add", "delete") or not isinstance(content, str):
        return ""
    sign, head = (
        ("+", f"--- /dev/null\n+++ b/{path}\n")
        if kind == "add"
        else ("-", f"--- a/{path}\n+++ /dev/null\n")
    )
    return head + "".join(f"{sign}{line}\n" for line in content.splitlines())


class _Echoes:
    """Messages Codex writes twice (a ``response_item`` and a UI event): the copy is dropped.

    Each origin (``item`` / ``event``) keeps a short window of keys waiting for their twin;
    the order of the two copies varies between Codex versions.
    """

    def __init__(self) -> None:
        self.item: list[tuple[str, Entry]] = []
        self.event: list[tuple[str, Entry]] = []

    def _others(self, origin: str) -> list[tuple[str, Entry]]:
        return self.event if origin == "item" else self.item

    def take(self, origin: str, key: str) -> Entry | None:
        """The entry of the other origin with ``key`` (consumed), or None."""
        others = self._others(origin)
        for index, (waiting, entry) in enumerate(others):
            if waiting == key:
                del others[index]
                return entry
        return None

    def take_all(self, origin: str, keys: list[str]) -> bool:
        """Consume one waiting twin per key, only if every key has one."""
        others = self._others(origin)
        remaining = list(others)
        for key in keys:
            index = next((i for i, (waiting, _) in enumerate(remaining) if waiting == key), None)
            if index is None:
                return False
            del remaining[index]
        others[:] = remaining
        return True

    def remember(self, origin: str, key: str, entry: Entry) -> None:
        mine = self.item if origin == "item" else self.event
        mine.append((key, entry))
        if len(mine) > _ECHO_WINDOW:
            del mine[0]

    def clear(self) -> None:
        if self.item:
            self.item.clear()
        if self.event:
            self.event.clear()


# --- the builder ---------------------------------------------------------------------------------

PayloadHandler = Callable[[Mapping[str, Any], int, "str | None"], None]


class CodexBuilder(ResponsesBuilder):
    """Builds a transcript from rollout records fed one at a time (see the module docstring)."""

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<rollout>",
        *,
        cwd: str | None = None,
        live: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, cwd=cwd, live=live)
        self._handlers.update(agent_message=self._inter_agent, ghost_snapshot=_skip)
        self._records: dict[str, PayloadHandler] = {
            "response_item": self._response_item,
            "event_msg": self._event,
            "session_meta": self._session_meta,
            "turn_context": self._turn_context,
            "compacted": self._compacted,
        }
        self._events: dict[str, PayloadHandler] = {
            "user_message": self._user_event,
            "agent_message": self._agent_message_event,
            "agent_reasoning": self._reasoning_event,
            "agent_reasoning_raw_content": self._reasoning_event,
            "token_count": self._token_count,
            "task_started": self._task_started,
            "turn_started": self._task_started,
            "task_complete": self._task_complete,
            "turn_complete": self._task_complete,
            "turn_aborted": self._turn_aborted,
            "context_compacted": self._context_compacted,
            "error": self._error_event,
            "exec_command_end": self._exec_end,
            "patch_apply_end": self._patch_end,
            "mcp_tool_call_end": self._mcp_end,
            "dynamic_tool_call_response": self._dynamic_end,
            "collab_agent_spawn_end": self._spawn_end,
            "thread_name_updated": self._thread_name,
            "entered_review_mode": self._review_started,
            "exited_review_mode": self._review_ended,
            "thread_rolled_back": self._rolled_back,
            "undo_completed": self._undo_completed,
            **dict.fromkeys(_NOTICE_EVENTS, self._notice_event),
            **dict.fromkeys(SILENT_EVENTS, _skip),
        }
        self._turn = 0
        self._turn_batches = 0
        self._turn_prompted = False  # the turn has its user prompt
        self._turn_busy = False  # entries other than the prompt were added in this turn
        self._turn_user: UserMessage | None = None
        self._turn_text: AssistantText | None = None
        self._usage_text: AssistantText | None = None  # text of the response being counted
        self._user_echoes = _Echoes()
        self._model_echoes = _Echoes()
        self._boundary: tuple[str, Entry] | None = None
        self._diffs: dict[str, str] = {}
        self._spawns: list[ToolCall] = []
        self._unknown: set[str] = set()
        self._session_seen = False
        self._bad_times = 0
        self._first_bad_time: int | None = None
        self._last_time: tuple[Any, str | None] = (None, None)
        self._total_usage: Usage | None = None
        self._durations: list[float] = []

    # --- records ---------------------------------------------------------------------------

    def feed(self, item: Mapping[str, Any], line: int) -> None:
        """Add one rollout line: an envelope, the legacy header, or a legacy bare item."""
        # JSON gives dicts; the exact check first keeps the per-line cost low (spec Q-1).
        if type(item) is not dict and not isinstance(item, Mapping):
            self.warn("not a JSON object", line)
            return
        kind = item.get("type")
        payload = item.get("payload")
        if type(payload) is dict or (payload is not None and isinstance(payload, Mapping)):
            self._envelope(kind, payload, self._time(item, line), line)
        elif "payload" in item:
            self.warn(f"{kind} record without a payload object", line)
        elif is_legacy_header(item):
            self.recognized += 1
            self._legacy_meta(item)
        elif "record_type" in item:
            self.recognized += 1  # legacy {"record_type": "state"} bookkeeping
        elif not self.feed_item(item, line, self._time(item, line)):
            self.warn(f"not a Codex rollout record (type {kind!r})", line)

    def _envelope(
        self, kind: Any, payload: Mapping[str, Any], timestamp: str | None, line: int
    ) -> None:
        if type(kind) is not str:
            self.warn(f"record with a payload but no type ({kind!r})", line)
            return
        self.recognized += 1  # the envelope is Codex's, whatever its type
        reader = self._records.get(kind)
        if reader is not None:
            reader(payload, line, timestamp)
        elif kind not in SILENT_RECORDS:
            self._unknown_once(f"record type {kind!r}", line)

    def _response_item(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        if not self.feed_item(payload, line, timestamp):
            self.warn(f"unknown response_item type {payload.get('type')!r} skipped", line)

    def _event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        kind = payload.get("type")
        handler = self._events.get(kind) if type(kind) is str else None
        if handler is None:
            self._unknown_once(f"event_msg type {kind!r}", line)
        else:
            handler(payload, line, timestamp)

    def _compacted(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        message = payload.get("message")
        self.add_compaction(message if isinstance(message, str) else None, timestamp, "item")

    def _time(self, record: Mapping[str, Any], line: int) -> str | None:
        raw = record.get("timestamp")
        if raw is self._last_time[0] or raw == self._last_time[0]:
            timestamp = self._last_time[1]  # lines written together share their timestamp
        else:
            timestamp = checked_timestamp(raw)
            self._last_time = (raw, timestamp)
        if timestamp is None and raw is not None:
            self._bad_times += 1
            self._first_bad_time = self._first_bad_time or line
        return timestamp

    def _unknown_once(self, what: str, line: int) -> None:
        if what not in self._unknown:
            self._unknown.add(what)
            self.warn(f"unknown {what} skipped (later lines of this type without a warning)", line)

    # --- session and turns -----------------------------------------------------------------

    def _session_meta(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        if self._session_seen:  # a later session_meta marks a resume or a fork of this file
            return
        self._session_seen = True
        meta = self.transcript.metadata
        _put(meta, "session_id", payload.get("id") or payload.get("session_id"))
        _put(meta, "started_at", checked_timestamp(payload.get("timestamp")))
        for key in ("cwd", "originator", "model_provider", "forked_from_id"):
            _put(meta, key, payload.get(key))
        _put(meta, "version", payload.get("cli_version"))
        _put(meta, "cli_version", payload.get("cli_version"))
        if isinstance(meta.get("cwd"), str):
            self.cwd = meta["cwd"]
        source = payload.get("source")
        if isinstance(source, (str, Mapping)) and source:
            meta["source"] = plain_copy(dict(source) if isinstance(source, Mapping) else source)
        if isinstance(payload.get("git"), Mapping):
            meta["git"] = {k: v for k, v in payload["git"].items() if isinstance(v, str)}
        if isinstance(source, Mapping) and "subagent" in source:
            self._subagent_meta(source["subagent"], payload)

    def _subagent_meta(self, subagent: Any, payload: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        meta["subagent"] = plain_copy(subagent)
        spawn = subagent.get("thread_spawn") if isinstance(subagent, Mapping) else None
        spawn = spawn if isinstance(spawn, Mapping) else {}
        _put(
            meta,
            "parent_session_id",
            spawn.get("parent_thread_id") or payload.get("parent_thread_id"),
        )
        _put(meta, "agent_name", spawn.get("agent_nickname") or payload.get("agent_nickname"))
        _put(meta, "agent_role", spawn.get("agent_role") or payload.get("agent_role"))

    def _legacy_meta(self, header: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        _put(meta, "session_id", header.get("id"))
        _put(meta, "started_at", checked_timestamp(header.get("timestamp")))
        if isinstance(header.get("git"), Mapping):
            meta["git"] = {k: v for k, v in header["git"].items() if isinstance(v, str)}

    def _turn_context(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        model, cwd = payload.get("model"), payload.get("cwd")
        if isinstance(model, str) and model:
            self.model = model
            self.transcript.metadata.setdefault("model", model)
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
            self.transcript.metadata.setdefault("cwd", cwd)

    def _start_turn(self) -> None:
        self._turn += 1
        self._turn_batches = 0
        self._open = {}  # calls of earlier turns that never got an output stay as they are
        self._turn_prompted = self._turn_busy = False
        self._turn_user = self._turn_text = self._usage_text = None
        self._model_echoes.clear()
        self.close_batch()

    def _task_started(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        # Some builds write the prompt just before task_started: that prompt opens this turn.
        if not self._turn_prompted or self._turn_busy:
            self._start_turn()

    def _task_complete(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        error = payload.get("error")
        message = error.get("message") if isinstance(error, Mapping) else None
        if isinstance(message, str) and message:
            self._add_error(message, timestamp)
        changes: dict[str, Any] = {}
        duration = payload.get("duration_ms")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration > 0:
            changes["turn_duration_ms"] = duration
            self._durations.append(duration)
        first_token = as_int(payload.get("time_to_first_token_ms"))
        if first_token is not None and first_token > 0:
            changes["time_to_first_token_ms"] = first_token
        target: Entry | None = self._turn_text or self._turn_user
        if changes and target is not None:
            self.transcript.update(target, meta={**target.meta, **changes})
        if self.live:  # the turn is over: a call still running has no recorded outcome
            for call in list(self._open.values()):
                if call.status == "executing":
                    self.transcript.update(call, status="unknown")
        self._open = {}
        self.close_batch()

    def _turn_aborted(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        reason = payload.get("reason")
        meta: dict[str, Any] = {}
        duration = payload.get("duration_ms")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration > 0:
            meta["turn_duration_ms"] = duration
        self.cancel_open(timestamp)
        marker = AbortMarker(
            reason=reason if isinstance(reason, str) else None, timestamp=timestamp, meta=meta
        )
        self._append(marker)

    # --- prompts, text and reasoning -------------------------------------------------------

    def add_user(
        self, text: str, counts: Mapping[str, int], timestamp: str | None, line: int, origin: str
    ) -> UserMessage | None:
        shell = user_shell_command(text)
        if shell is not None:
            self._user_shell(*shell, timestamp, line)
            return None
        if is_injected_context(text):
            return None
        meta: dict[str, Any] = dict(counts)
        if text.startswith(_IDE_CONTEXT) and _IDE_REQUEST in text:
            context, _, text = text.partition(_IDE_REQUEST)
            meta["ide_context"] = context.strip()
            text = text.strip()
        full = prompt_text(text, counts)
        if not full:
            return None
        key = _echo_key(full)
        twin = self._user_echoes.take(origin, key)
        if twin is not None:
            if counts and not any(k in twin.meta for k in counts):
                self.transcript.update(twin, meta={**twin.meta, **counts})
            return None
        if self._turn_prompted or self._turn == 0:
            self._start_turn()
        message = UserMessage(text=full, timestamp=timestamp, meta=meta)
        self._append(message)
        self._user_echoes.remember(origin, key, message)
        self._turn_prompted = True
        self._turn_user = message
        return message

    def prompt_of(self, content: Any) -> str:
        """A user message's text without the parts that are injected context."""
        if not isinstance(content, list):
            return super().prompt_of(content)
        own = super().prompt_of  # zero-argument super() does not work inside a comprehension
        parts = [own([part]) for part in content]
        kept = [p for p in parts if p and (not is_injected_context(p) or user_shell_command(p))]
        return "\n".join(kept)

    def _user_shell(self, command: str, result: str, timestamp: str | None, line: int) -> None:
        facts = exec_output(result.strip("\n") + "\n")
        args = {"command": command}
        status: ToolStatus = "unknown"
        meta: dict[str, Any] = {}
        if facts is not None and facts.exit_code is not None:
            status = "success" if facts.exit_code == 0 else "error"
            meta["exit_code"] = facts.exit_code
        body = facts.body if facts is not None else result
        call = ToolCall(
            call_id=f"user_shell@{line}",
            name="shell",
            args=args,
            description=describe_args("shell", args, self.cwd),
            status=status,
            result=text_result(body.rstrip("\n") or None),
            started_at=timestamp,
            timestamp=timestamp,
            duration_ms=facts.duration_ms if facts is not None else None,
            user_initiated=True,
            meta=meta,
        )
        self._append(call)

    def add_assistant(
        self, text: str, timestamp: str | None, meta: dict[str, Any], line: int, origin: str
    ) -> None:
        key = "text:" + _echo_key(text)
        if self._model_echoes.take(origin, key) is not None:
            return
        entry = AssistantText(text=text, model=self.model, timestamp=timestamp, meta=meta)
        self._append(entry)
        self._model_echoes.remember(origin, key, entry)

    def _user_event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        message = payload.get("message")
        images = [
            image
            for key in ("images", "local_images")
            if isinstance(payload.get(key), list)
            for image in payload[key]
        ]
        counts = {"images": len(images)} if images else {}
        self.add_user(message if isinstance(message, str) else "", counts, timestamp, line, "event")

    def _agent_message_event(
        self, payload: Mapping[str, Any], line: int, timestamp: str | None
    ) -> None:
        message = payload.get("message")
        if isinstance(message, str) and message:
            meta = {"phase": payload["phase"]} if isinstance(payload.get("phase"), str) else {}
            self.add_assistant(message, timestamp, meta, line, "event")

    def _reasoning(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        thinking, parts = reasoning_thinking(item)
        if thinking is None:
            return
        thinking.timestamp = timestamp
        shown = [f"{thinking.form}:{_echo_key(p)}" for p in parts]
        if shown and self._model_echoes.take_all("item", shown):
            return  # the agent_reasoning events came first and are already shown
        self._append(thinking)
        # Events repeat the summary even when the raw text is what is shown.
        summary = _summary_parts(item) if thinking.form == "text" else []
        for key in shown + [f"summary:{_echo_key(p)}" for p in summary]:
            self._model_echoes.remember("item", key, thinking)

    def _reasoning_event(
        self, payload: Mapping[str, Any], line: int, timestamp: str | None
    ) -> None:
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            return
        form: ThinkingForm = (
            "text" if payload.get("type") == "agent_reasoning_raw_content" else "summary"
        )
        key = f"{form}:{_echo_key(text)}"
        if self._model_echoes.take("event", key) is not None:
            return
        thinking = Thinking(text=text, form=form, timestamp=timestamp)
        self._append(thinking)
        self._model_echoes.remember("event", key, thinking)

    def add_instructions(self, role: str, text: str, timestamp: str | None, line: int) -> None:
        """Developer and system messages in a rollout are injected context: not shown."""

    def _inter_agent(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        text = parts_text(item.get("content"))
        if not text:
            return
        meta = {k: item[k] for k in ("author", "recipient") if isinstance(item.get(k), str)}
        self._append(SystemNotice(text=text, subtype="inter_agent", timestamp=timestamp, meta=meta))

    # --- usage, compaction, notices --------------------------------------------------------

    def _token_count(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        info = payload.get("info")
        if not isinstance(info, Mapping):
            return  # the first token_count of a turn often holds only rate limits
        total = codex_usage(info.get("total_token_usage"))
        if total is not None:
            self._total_usage = total
        last = codex_usage(info.get("last_token_usage"))
        if last is not None and self._usage_text is not None:
            self.transcript.update(self._usage_text, usage=last)
        self._usage_text = None

    def add_compaction(self, summary: str | None, timestamp: str | None, origin: str) -> None:
        last = self.transcript.entries[-1] if self.transcript.entries else None
        if self._boundary is not None and self._boundary[1] is last and self._boundary[0] != origin:
            # compacted and context_compacted report the same compaction.
            if summary and not getattr(last, "summary", None):
                self.transcript.update(last, summary=summary)
            self._boundary = None
            return
        super().add_compaction(summary, timestamp, origin)
        self._boundary = (origin, self.transcript.entries[-1])

    def _context_compacted(
        self, payload: Mapping[str, Any], line: int, timestamp: str | None
    ) -> None:
        self.add_compaction(None, timestamp, "event")

    def _error_event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        message = payload.get("message")
        self._add_error(message if isinstance(message, str) and message else "Error", timestamp)

    def _add_error(self, message: str, timestamp: str | None) -> None:
        last = self.transcript.entries[-1] if self.transcript.entries else None
        if isinstance(last, AssistantError) and last.message == message:
            return  # task_complete repeats the error event that ended the turn
        self._append(AssistantError(message=message, timestamp=timestamp))

    def _notice_event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        kind = str(payload.get("type"))
        message = payload.get("message")
        if isinstance(message, str) and message:
            self._notice(message, kind, timestamp, _NOTICE_EVENTS[kind])

    def _notice(
        self,
        text: str,
        subtype: str,
        timestamp: str | None,
        level: Literal["info", "warning"] = "info",
        **meta: Any,
    ) -> None:
        self._append(
            SystemNotice(text=text, level=level, subtype=subtype, timestamp=timestamp, meta=meta)
        )

    def _thread_name(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        _put(self.transcript.metadata, "title", payload.get("thread_name"))

    def _review_started(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        hint = payload.get("user_facing_hint")
        self._notice(
            hint if isinstance(hint, str) and hint else "Review started", "review", timestamp
        )

    def _review_ended(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        review = payload.get("review_output")
        review = review if isinstance(review, Mapping) else {}
        explanation = review.get("overall_explanation")
        lines = [explanation if isinstance(explanation, str) and explanation else "Review finished"]
        findings = review.get("findings")
        findings = findings if isinstance(findings, list) else []
        for finding in findings:
            if isinstance(finding, Mapping) and isinstance(finding.get("title"), str):
                lines.append(f"- {finding['title']}")
        self._notice("\n".join(lines), "review", timestamp, findings=len(findings))

    def _rolled_back(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        turns = as_int(payload.get("num_turns"))
        text = f"Rolled back {turns} turn{'s' if turns != 1 else ''}" if turns else "Rolled back"
        self._notice(text, "rollback", timestamp)

    def _undo_completed(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        success = payload.get("success") is not False
        message = payload.get("message")
        text = (
            message
            if isinstance(message, str) and message
            else ("Undo completed" if success else "Undo failed")
        )
        self._notice(text, "undo", timestamp, "info" if success else "warning")

    # --- tool calls ------------------------------------------------------------------------

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
        call = super().start_call(call_id, name, args, line, timestamp, status, meta, batch=batch)
        if name in _SPAWN_TOOLS:
            self._spawns.append(call)
            task = _first_str(args, ("message", "prompt", "task", "description"))
            self.transcript.update(call, subagent=SubAgent(task=task))
        return call

    def new_batch_id(self, line: int) -> str:
        self._turn_batches += 1
        return f"turn{self._turn}-batch{self._turn_batches}"

    def outcome(self, call: ToolCall, value: Any) -> tuple[ToolStatus, ToolResult, dict[str, Any]]:
        """Status from the exit code in the output, else from events, else unknown (L-3)."""
        value, success = _unwrap_output(value)
        text, images = output_content(value)
        changes: dict[str, Any] = {}
        facts = exec_output(text) if text else None
        if facts is not None:
            text = facts.body
            meta = dict(call.meta)
            if facts.exit_code is not None:
                meta["exit_code"] = facts.exit_code
            if facts.header:
                meta["output_header"] = facts.header
            changes["meta"] = meta
            if facts.duration_ms is not None:
                changes["duration_ms"] = facts.duration_ms
        status = _derived_status(call, text, facts, success)
        diff = self._diffs.pop(call.call_id, None)
        if diff is not None and status != "error":
            structured = {"output": text} if text else None
            result = ToolResult(text=diff, kind="diff", images=images, structured=structured)
        else:
            result = tool_result(call, text, images, status)
        if call.name in _SPAWN_TOOLS and text:
            spawned = _spawn_output(text)
            if spawned and call.subagent is not None:
                changes["subagent"] = replace(call.subagent, **spawned)
        return status, result, changes

    def _open_call(self, payload: Mapping[str, Any]) -> ToolCall | None:
        call_id = payload.get("call_id")
        return self._open.get(call_id) if isinstance(call_id, str) else None

    def _exec_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call = self._open_call(payload)
        if call is None:
            return
        changes: dict[str, Any] = {}
        code = as_int(payload.get("exit_code"))
        if code is not None:
            changes["status"] = "success" if code == 0 else "error"
            changes["meta"] = {**call.meta, "exit_code": code}
        duration = _duration_ms(payload.get("duration"))
        if duration is not None:
            changes["duration_ms"] = duration
        output = next(
            (payload[k] for k in ("aggregated_output", "formatted_output", "stdout")
             if isinstance(payload.get(k), str) and payload[k]),
            None,
        )  # fmt: skip
        if output is not None and call.result is None:
            changes["result"] = text_result(output)
        if changes:
            self.transcript.update(call, **changes)

    def _patch_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call = self._open_call(payload)
        if call is None:
            return
        success = payload.get("success")
        diff = changes_diff(payload.get("changes"))
        if diff is not None:
            self._diffs[call.call_id] = diff
        changes: dict[str, Any] = {}
        if isinstance(success, bool):
            changes["status"] = "success" if success else "error"
        output = "\n".join(
            payload[k]
            for k in ("stdout", "stderr")
            if isinstance(payload.get(k), str) and payload[k]
        )
        if diff is not None and success is not False:
            changes["result"] = ToolResult(
                text=diff, kind="diff", structured={"output": output} if output else None
            )
        elif output:
            changes["result"] = text_result(output)
        if changes:
            self.transcript.update(call, **changes)

    def _mcp_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call = self._open_call(payload)
        outcome = payload.get("result")
        if call is None or not isinstance(outcome, Mapping):
            return
        changes: dict[str, Any] = {}
        if "Err" in outcome:
            changes["status"] = "error"
            content: Any = outcome["Err"]
        else:
            ok = outcome.get("Ok")
            ok = ok if isinstance(ok, Mapping) else {}
            # MCP: an absent isError means the call did not fail.
            changes["status"] = "error" if ok.get("isError") is True else "success"
            content = ok.get("content")
        duration = _duration_ms(payload.get("duration"))
        if duration is not None:
            changes["duration_ms"] = duration
        text, images = output_content(content)
        if call.result is None and (text or images):
            changes["result"] = text_result(text, images=images)
        self.transcript.update(call, **changes)

    def _dynamic_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call = self._open_call(payload)
        if call is None:
            return
        changes: dict[str, Any] = {}
        if isinstance(payload.get("success"), bool):
            changes["status"] = "success" if payload["success"] else "error"
        duration = _duration_ms(payload.get("duration"))
        if duration is not None:
            changes["duration_ms"] = duration
        if changes:
            self.transcript.update(call, **changes)

    def _spawn_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call_id = payload.get("call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None or call.name not in _SPAWN_TOOLS:
            return
        agent = call.subagent or SubAgent()
        spawned = replace(
            agent,
            agent_id=_first_str(payload, ("new_thread_id",)) or agent.agent_id,
            name=_first_str(payload, ("new_agent_nickname", "new_agent_role")) or agent.name,
            task=agent.task or _first_str(payload, ("prompt",)),
        )
        self.transcript.update(call, subagent=spawned)

    # --- the end ---------------------------------------------------------------------------

    def finish(self, path: Path | None = None, depth: int = 0) -> None:
        """Session totals into ``metadata``; sub-agent rollouts beside ``path`` linked in."""
        meta = self.transcript.metadata
        if self._total_usage is not None:
            meta["usage"] = {k: v for k, v in vars(self._total_usage).items() if v is not None}
        if self._durations:
            meta["duration_ms"] = sum(self._durations)
        if self._bad_times:
            reason = (
                f"{self._bad_times} line(s) with a placeholder or unreadable timestamp;"
                " no time shown"
            )
            self.warn(reason, self._first_bad_time)
        if path is not None and depth < _MAX_SUBAGENT_DEPTH:
            for call in self._spawns:
                self._link_subagent(call, path, depth)

    def _link_subagent(self, call: ToolCall, path: Path, depth: int) -> None:
        agent = call.subagent
        if agent is None or not agent.agent_id or not _SAFE_ID.match(agent.agent_id):
            return
        found = sorted(p for p in path.parent.glob(f"rollout-*{agent.agent_id}.jsonl") if p != path)
        if not found:
            return
        try:
            child = _load_file(found[0], depth + 1)
        except (OSError, TranscriptFormatError) as exc:
            self.warn(f"sub-agent rollout {found[0].name} not read: {exc}", None)
            return
        usage = child.metadata.get("usage")
        calls = child.tool_calls()
        linked = replace(
            agent,
            transcript=child,
            name=agent.name or child.metadata.get("agent_name"),
            tool_count=len(calls),
            subagent_count=sum(1 for c in calls if c.subagent is not None),
            duration_ms=child.metadata.get("duration_ms"),
            output_tokens=usage.get("output_tokens") if isinstance(usage, dict) else None,
        )
        self.transcript.update(call, subagent=linked)

    # --- bookkeeping -----------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        if isinstance(entry, UserMessage):
            self._model_echoes.clear()
        else:
            self._user_echoes.clear()  # the model answered: the prompt's twin is not coming
            self._turn_busy = True
        super()._append(entry)
        if isinstance(entry, AssistantText):
            self._turn_text = self._usage_text = entry
        return entry


def _skip(payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
    """Bookkeeping or an echo of an item already read."""


def _put(meta: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, str) and value:
        meta[key] = value


def _first_str(value: Any, keys: tuple[str, ...]) -> str | None:
    if not isinstance(value, Mapping):
        return None
    return next((value[k] for k in keys if isinstance(value.get(k), str) and value[k]), None)


def _summary_parts(item: Mapping[str, Any]) -> list[str]:
    summary = item.get("summary")
    if not isinstance(summary, list):
        return []
    return [p["text"] for p in summary if isinstance(p, Mapping) and isinstance(p.get("text"), str)]


def _unwrap_output(value: Any) -> tuple[Any, bool | None]:
    """Newer rollouts may store the output payload as ``{"content": ..., "success": bool}``."""
    if isinstance(value, Mapping) and "type" not in value and "content" in value:
        success = value.get("success")
        return value["content"], success if isinstance(success, bool) else None
    return value, None


def _derived_status(
    call: ToolCall, text: str | None, facts: ExecOutput | None, success: bool | None
) -> ToolStatus:
    if text is not None and text.strip() == "aborted":
        return "cancelled"  # Codex's stand-in output for a call cut off by an interrupt
    if facts is not None and facts.exit_code is not None:
        return "success" if facts.exit_code == 0 else "error"
    if success is not None:
        return "success" if success else "error"
    if call.status in _FINISHED:
        return call.status  # an exec/patch/MCP end event or the abort already said
    return "unknown"


def _spawn_output(text: str) -> dict[str, Any]:
    """What ``spawn_agent``'s JSON output says of the new agent."""
    if not text.lstrip().startswith("{"):
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    found: dict[str, Any] = {}
    agent_id = _first_str(value, ("agent_id", "thread_id"))
    if agent_id:
        found["agent_id"] = agent_id
    name = _first_str(value, ("nickname", "agent_nickname", "name"))
    if name:
        found["name"] = name
    return found


# --- detection and reading -------------------------------------------------------------------


def is_legacy_header(value: Any) -> bool:
    """The first line of an envelope-less rollout: ``{"id", "timestamp", "instructions"}``."""
    return (
        isinstance(value, Mapping)
        and "type" not in value
        and isinstance(value.get("id"), str)
        and "timestamp" in value
        and "instructions" in value
    )


def _is_envelope(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("type"), str)
        and value["type"] in ENVELOPE_TYPES
        and isinstance(value.get("payload"), Mapping)
        and "timestamp" in value
    )


def detect(source: Source) -> Evidence:
    """``{timestamp, type, payload}`` envelopes, or the legacy first line followed by bare
    response items."""
    values = source.head_values()
    legacy = bool(values) and is_legacy_header(values[0])

    def classify(value: Any) -> int:
        if _is_envelope(value) or is_legacy_header(value):
            return DISTINCTIVE
        if legacy and isinstance(value, Mapping) and ("type" in value or "record_type" in value):
            return READABLE
        return NOT_MINE

    return Evidence.of(values, classify, "no {timestamp, type, payload} envelope")


def read(source: Source) -> Transcript:
    """Every record of ``source`` fed to a :class:`CodexBuilder` in one pass."""
    return _read(source, depth=0)


def _read(source: Source, depth: int) -> Transcript:
    transcript = Transcript(metadata={"source_format": NAME})
    builder = CodexBuilder(transcript, source.name)
    first_line: int | None = None
    for line, record in source.records():
        first_line = line if first_line is None else first_line
        if isinstance(record, MalformedLine):
            builder.warn(record.reason, line)
        else:
            builder.feed(record, line)
    if builder.recognized == 0:
        reason = "no Codex rollout record ({timestamp, type, payload} lines)"
        raise TranscriptFormatError(source.name, [NAME], first_line, reason)
    builder.finish(source.path, depth)
    return transcript


def _load_file(path: Path, depth: int) -> Transcript:
    """A sub-agent's own rollout file."""
    source, stream = open_source(path)
    try:
        if not source.head:
            raise TranscriptFormatError(source.name, [NAME], None, "the source is empty")
        child = _read(source, depth)
    finally:
        if stream is not None:
            stream.close()
    child.warnings[:0] = source.warnings
    return child
