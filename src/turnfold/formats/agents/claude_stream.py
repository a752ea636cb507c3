"""Claude Code's ``stream-json`` output (spec H-5): ``claude -p --output-format stream-json
--verbose``, also the Claude Agent SDK's messages saved as JSON lines or as one JSON array.

Events (``type``, and ``subtype`` for ``system`` and ``result``):

- ``system/init`` → metadata: ``session_id``, ``model``, ``cwd``, ``version``
  (``claude_code_version``), ``agent`` ``claude-code``;
- ``assistant`` → the Anthropic message's blocks (:mod:`~turnfold.formats.anthropic_blocks`, as
  the ``anthropic`` loader maps them). Claude Code writes one event per content block, each with
  the whole message's ``usage``: the usage is counted once per ``message.id``, on its last text;
- ``user`` → the ``tool_result`` blocks settle their calls (``is_error`` → ``error``); text is a
  prompt (``-p`` does not echo the first prompt; a sub-agent's task arrives this way);
- events with a ``parent_tool_use_id`` belong to the sub-agent that ``Task``/``Agent`` call
  started: they make its own transcript, nested under that call (F-7), at any depth;
- ``system/compact_boundary`` → a :class:`~turnfold.model.CompactionBoundary`;
- ``result`` → metadata (H-6): ``outcome`` (``error_max_turns`` → ``incomplete``, other
  ``error_*`` subtypes or ``is_error`` → ``error``, ``success`` → ``pass``), ``cost_usd``
  (``total_cost_usd``), ``duration_ms``, ``num_turns``; a failed run's ``result`` or
  ``errors`` text is an :class:`~turnfold.model.AssistantError`;
- the sub-agent task events (``system/task_*``), thinking-token estimates and partial-message
  ``stream_event`` records are left out: the messages above hold what they announce.

Detection: ``session_id`` (snake case) with ``parent_tool_use_id`` on messages, the ``init``
and ``result`` events; Claude Code's own session files have ``sessionId`` and ``uuid`` chains,
Anthropic message lists have ``role`` at the top.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnfold.formats.anthropic import AnthropicBuilder
from turnfold.formats.anthropic_blocks import usage_of
from turnfold.formats.catalog import Records
from turnfold.formats.common import NameSet, checked_timestamp
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine
from turnfold.formats.source import Source
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    SubAgent,
    ToolCall,
    Transcript,
    UserMessage,
)

NAME = "claude-stream-json"

RECORDS = Records(
    mapped={
        "system/init": "metadata: session id, model, working folder, Claude Code version",
        "assistant": "text, thinking and tool calls of one content block (usage once per message)",
        "user": "tool results settling their calls; text as a prompt",
        "system/compact_boundary": "a compaction boundary",
        "result": "outcome, cost, duration and turns (metadata); a failure as an error",
    },
    ignored={
        "system/thinking_tokens": "an estimate of thinking tokens while the model thinks",
        "system/task_started": "a sub-agent started: its events and its call's result hold it",
        "system/task_progress": "a sub-agent's progress: its own events hold its steps",
        "system/task_updated": "a sub-agent's state change: its call's result holds the outcome",
        "system/task_notification": "a sub-agent's summary: its call's result holds the same",
        "system/hook_started": "a hook run; hooks that fail or speak leave a user event",
        "system/hook_response": "a hook's output",
        "system/status": "a status line of the CLI",
        "system/api_retry": "a retried API request; the retried answer is shown",
        "stream_event": "partial-message deltas; the assistant events hold whole blocks",
        "rate_limit_event": "rate-limit state of the account",
    },
)

_MESSAGE_TYPES = NameSet({"assistant", "user"})
_OUTCOMES = {"success": "pass", "error_max_turns": "incomplete"}


def _kind(record: Mapping[str, Any]) -> str:
    kind = record.get("type")
    kind = kind if isinstance(kind, str) and kind else "(object)"
    subtype = record.get("subtype")
    if kind == "system" and isinstance(subtype, str) and subtype:
        return f"system/{subtype}"
    return kind


# --- detection ------------------------------------------------------------------------------


def _classify(value: Any) -> int:
    if not isinstance(value, Mapping) or "sessionId" in value:
        return NOT_MINE
    kind = value.get("type")
    if kind in _MESSAGE_TYPES:
        marked = "parent_tool_use_id" in value and "session_id" in value
        return DISTINCTIVE if marked and isinstance(value.get("message"), Mapping) else NOT_MINE
    if kind == "system" and "session_id" in value:
        return DISTINCTIVE if value.get("subtype") == "init" else READABLE
    if kind == "result" and isinstance(value.get("subtype"), str) and "session_id" in value:
        return DISTINCTIVE
    if kind in ("stream_event", "rate_limit_event") and "session_id" in value:
        return READABLE
    return NOT_MINE


_LACKS = "no stream-json event (session_id, parent_tool_use_id)"


def detect(source: Source) -> Evidence:
    """Stream-json events: JSON lines, or one JSON array of them."""
    if source.is_document and not isinstance(source.document, list):
        return Evidence.of([source.document], _classify, _LACKS)
    return Evidence.of(source.head_values(), _classify, _LACKS)


# --- reading --------------------------------------------------------------------------------


class _Thread:
    """One agent's messages: the session's, or a sub-agent's (by its parent tool use id)."""

    def __init__(self, name: str) -> None:
        self.transcript = Transcript(metadata={"source_format": NAME})
        self.builder = AnthropicBuilder(self.transcript, name)
        self.last_text: dict[str, AssistantText] = {}  # message id → its last text so far

    def assistant(self, message: Mapping[str, Any], line: int) -> None:
        """One content block's event; the message's usage moves to its newest text."""
        own_id = message.get("id")
        before = len(self.transcript.entries)
        self.builder.feed({k: v for k, v in message.items() if k != "usage"}, line)
        texts = [e for e in self.transcript.entries[before:] if isinstance(e, AssistantText)]
        usage = usage_of(message.get("usage"))
        if not texts:
            return
        key = own_id if isinstance(own_id, str) else f"line-{line}"
        previous = self.last_text.get(key)
        if previous is not None:
            previous.usage = None
        self.last_text[key] = texts[-1]
        texts[-1].usage = usage


def read(source: Source) -> Transcript:
    """The session's events, sub-agents' events nested under the calls that started them."""
    threads: dict[str | None, _Thread] = {None: _Thread(source.name)}
    main = threads[None]
    for line, record in source.records():
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        if not isinstance(record, Mapping):
            source.warn("not a stream-json event", line)
            continue
        kind = _kind(record)
        if kind in RECORDS.ignored:
            source.ignored(kind)
        elif kind in _MESSAGE_TYPES:
            parent = record.get("parent_tool_use_id")
            key = parent if isinstance(parent, str) and parent else None
            thread = threads.get(key)
            if thread is None:
                thread = threads[key] = _Thread(source.name)
            _message(source, thread, record, kind, line)
        elif kind == "system/init":
            _init(main.transcript, record)
            source.mapped(kind)
        elif kind == "system/compact_boundary":
            meta = record.get("compact_metadata")
            meta = meta if isinstance(meta, Mapping) else {}
            trigger = meta.get("trigger")
            main.transcript.append(
                CompactionBoundary(
                    trigger=trigger if isinstance(trigger, str) else None,
                    pre_tokens=meta.get("pre_tokens")
                    if isinstance(meta.get("pre_tokens"), int)
                    else None,
                )
            )
            source.mapped(kind)
        elif kind == "result":
            _result(main.transcript, record)
            source.mapped(kind)
        else:
            source.warn(f"unknown stream-json event {kind!r} skipped", line)
    _nest(threads, source)
    return main.transcript


def _message(
    source: Source, thread: _Thread, record: Mapping[str, Any], kind: str, line: int
) -> None:
    message = record.get("message")
    if not isinstance(message, Mapping):
        source.warn(f"{kind} event without a message", line)
        return
    warnings = thread.transcript.warnings
    before, entries = len(warnings), len(thread.transcript.entries)
    if kind == "assistant":
        thread.assistant(message, line)
    else:
        thread.builder.feed(message, line)
    stamp = checked_timestamp(record.get("timestamp"))
    for entry in thread.transcript.entries[entries:]:
        entry.timestamp = entry.timestamp or stamp
    said = warnings[before:]
    del warnings[before:]
    if not said:
        source.mapped(kind)
    for index, warning in enumerate(said):  # the record is counted once, as warned about
        source.warn(warning.reason, line, record_type=kind if index == 0 else None)


def _init(transcript: Transcript, record: Mapping[str, Any]) -> None:
    meta = transcript.metadata
    meta["agent"] = "claude-code"
    for key, name in (("session_id", "session_id"), ("model", "model"), ("cwd", "cwd"),
                      ("claude_code_version", "version")):  # fmt: skip
        value = record.get(key)
        if isinstance(value, str) and value:
            meta[name] = value


def _result(transcript: Transcript, record: Mapping[str, Any]) -> None:
    meta = transcript.metadata
    subtype = record.get("subtype")
    stopped = subtype == "error_max_turns"  # the run was cut short, not broken
    failed = not stopped and (
        record.get("is_error") is True or (isinstance(subtype, str) and subtype.startswith("error"))
    )
    if failed:
        meta["outcome"] = "error"
    elif isinstance(subtype, str) and subtype in _OUTCOMES:
        meta["outcome"] = _OUTCOMES[subtype]
    cost = record.get("total_cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        meta["cost_usd"] = cost
    for key in ("duration_ms", "duration_api_ms", "num_turns"):
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            meta[key] = value
    if isinstance(record.get("session_id"), str):
        meta.setdefault("session_id", record["session_id"])
    if failed or stopped:
        errors = record.get("errors")
        text = record.get("result")
        if isinstance(errors, list) and errors:
            text = "\n".join(str(e) for e in errors)
        reason = text if isinstance(text, str) and text else f"The run ended: {subtype}."
        transcript.append(AssistantError(message=reason))


def _nest(threads: dict[str | None, _Thread], source: Source) -> None:
    """Each sub-agent's transcript under the call with its parent tool use id."""
    calls: dict[str, ToolCall] = {}
    for thread in threads.values():
        calls.update({c.call_id: c for c in thread.transcript.tool_calls()})
    for key, thread in threads.items():
        if key is None:
            continue
        call = calls.get(key)
        if call is None:
            source.warn(f"sub-agent events for an unknown tool use {key!r} kept at the end")
            threads[None].transcript.append(
                ToolCall(call_id=key, name="Task", status="unknown", subagent=_sub(thread, None))
            )
            continue
        call.subagent = _sub(thread, call)


def _sub(thread: _Thread, call: ToolCall | None) -> SubAgent:
    args = call.args if call is not None and isinstance(call.args, Mapping) else {}
    name = args.get("subagent_type")
    task = next((e.text for e in thread.transcript.entries if isinstance(e, UserMessage)), None)
    return SubAgent(
        name=name if isinstance(name, str) else None,
        task=task,
        transcript=thread.transcript,
        tool_count=len(thread.transcript.tool_calls()),
    )
