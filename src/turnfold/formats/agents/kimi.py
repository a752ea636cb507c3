"""Kimi Code CLI sessions (Moonshot AI, ``@moonshot-ai/kimi-code`` 2.x): one agent's journal,
``~/.kimi-code/sessions/<workdir key>/<session id>/agents/<agent id>/wire.jsonl``.

The CLI writes a session as a folder: ``state.json`` (id, working folder, title) and one
``wire.jsonl`` per agent, ``agents/main/`` the lead agent's and ``agents/agent-<n>/`` each
sub-agent's. A journal opens with ``{"type": "metadata", "protocol_version"}``; every other line
is ``{type, agentId, …, time}`` (``time`` in ms since the epoch, one that is no time left out
and said on its line; the CLI's own list of durable types is
``packages/agent-core-v2/docs/wire-manifest.d.ts``), and some are UI events
``{…, "kind": "event"}``. A resumed session (``-S <id>``) appends to the same journals. Read here:

- ``turn.prompt`` / ``turn.steer`` → :class:`~turnfold.model.UserMessage` (its ``input`` text
  parts; an origin other than the user's, a sub-agent's task say, in ``meta["origin"]``); a
  steer's context copy, written before its ``turn.steer``, is the same message;
- ``context.append_loop_event``, the agent loop's steps: ``content.part`` → ``think`` as
  :class:`~turnfold.model.Thinking`, ``text`` as :class:`~turnfold.model.AssistantText` with the
  model of the step's ``llm.request``; ``tool.call`` → :class:`~turnfold.model.ToolCall`
  (``toolCallId``, ``name``, ``args``; a step's calls one batch); ``tool.result`` settles it:
  ``result.output`` the result, ``result.isError`` an ``error`` (after a ``turn.cancel``,
  ``cancelled``), ``result.note`` in ``meta["note"]``; ``step.end`` → the step's usage (its
  ``usage``, else the ``usage.record`` written when the response ended: an interrupted step
  has only that). ``inputOther`` is the prompt less the cached part, so the input count is
  ``inputOther + inputCacheRead + inputCacheCreation`` (:mod:`turnfold.usage`); no reasoning
  count is recorded;
- ``context.append_message``: a message added to the model's context. A prompt's own copy
  (its id a ``turn.prompt``'s) and the CLI's injected reminders are passed over; an
  ``assistant`` or ``tool`` message (as the legacy-session migration writes them) is read as
  the loop events are;
- ``subagent.spawned`` → the ``Agent`` call's :class:`~turnfold.model.SubAgent`, its child
  transcript read from ``../<subagentId>/wire.jsonl`` beside this journal (its own sub-agents'
  in turn, down to :data:`~turnfold.nesting.MAX_DEPTH` levels; one deeper is named in a
  warning, its journal loading on its own);
  ``subagent.completed`` / ``subagent.failed`` its summary or failure;
- ``turn.cancel`` → :class:`~turnfold.model.AbortMarker` (the running calls ``cancelled``);
  ``turn.ended`` with an ``error`` → :class:`~turnfold.model.AssistantError`;
  ``turn.step.retrying`` (a failed model request the CLI retries) → a warning
  :class:`~turnfold.model.SystemNotice`;
  ``context.apply_compaction`` / ``context.clear`` → :class:`~turnfold.model.CompactionBoundary`
  (the summary, ``tokensBefore`` its context size before);
  ``context.undo`` and a permission mode change → :class:`~turnfold.model.SystemNotice`;
- ``metadata``, ``profile.bind``, ``llm.request`` and the ``state.json`` beside the session's
  ``agents/`` → ``metadata`` (protocol version, start, system prompt, profile, model, session
  id, cwd, title).

Every other type is in ``RECORDS`` as ignored, with the reason; a type not there is warned of.

``load()`` reads a session from its folder too (``<session id>/``, which its ``state.json`` says
is a session, whatever its name) as its lead agent's journal, the one row a scan makes of the
folder; a folder without that journal, or with an empty one, is an error naming the folder.

The Python ``kimi-cli`` (PyPI, archived; ``~/.kimi/sessions/<workdir hash>/<session>/
context.jsonl`` of OpenAI-style messages and ``wire.jsonl`` of UI events, which
``kimi migrate`` converts) is a different format, ``kimi-cli``
(:mod:`turnfold.formats.agents.kimi_cli`).

Detection: the ``metadata`` line with a ``protocol_version``, or dotted types of the journal's
with an ``agentId`` (or ``kind: "event"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnfold.formats.agents.cline import ms_to_iso
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    as_int,
    as_text,
    parted_usage,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.gemini_parts import attach_child, make_call
from turnfold.formats.plain_names import is_plain_name
from turnfold.formats.protocol import read_events
from turnfold.formats.source import Source, join_warnings, json_object_file, open_source, read_file
from turnfold.formats.wording import failure, notice, stop
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    SubAgent,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.usage import attach_usage

NAME = "kimi"
#: What Kimi Code keeps its secrets in, in ``~/.kimi-code`` (``$KIMI_CODE_HOME``, moved under
#: any name; a project's ``.kimi-code`` for its ``mcp.json``), each as the ``dist/main.mjs`` of
#: ``@moonshot-ai/kimi-code`` 2.1.0 writes it: the OAuth tokens of each login
#: (``credentials/<name>.json``, ``FileTokenStorage``) and of each MCP server
#: (``credentials/mcp/<server>-<hash>``, the ``credentials/mcp`` scope of its document store
#: rooted in the folder); its settings ``config.toml`` (a provider's ``api_key``); the MCP
#: servers' ``mcp.json`` (their ``headers`` and ``env``); the token of its local server
#: ``server.token`` (``SERVER_TOKEN_FILE``); and the copies its migration from the Kimi CLI
#: writes beside them, ``config.migrated-from-kimi-cli.toml`` and
#: ``mcp.migrated-from-kimi-cli.json`` (``packages/migration-legacy/src/paths.ts``); and the
#: desktop GUI's copy of its local storage, ``gui.toml`` (``GuiStoreService``, written 0600:
#: ``/gui/store/setItem`` "mirrors localStorage.setItem"), where the web UI keeps the local
#: server's credential (``kimi-web.server-credential`` of ``dist-web``). The older Kimi CLI's
#: ``~/.kimi`` is :mod:`turnfold.formats.agents.kimi_cli`'s.
CREDENTIALS = Credentials(
    folders=frozenset({".kimi-code"}),
    files=frozenset({
        "credentials/**", "config.toml", "mcp.json", "server.token",
        "config.migrated-from-kimi-cli.toml", "mcp.migrated-from-kimi-cli.json", "gui.toml",
    }),
    variables=frozenset({"KIMI_CODE_HOME"}),
)  # fmt: skip

_UI = "the UI's copy (kind: event) of what the journal's own records hold"
_TRACE = "request tracing for debugging"
RECORDS = Records(
    mapped={
        "metadata": "metadata: protocol version, start",
        "profile.bind": "metadata: system prompt, profile, thinking effort",
        "llm.request": "the model of the step's texts (metadata model, provider)",
        "turn.prompt": "user message (its input text; a non-user origin in meta)",
        "turn.steer": "user message sent while the turn ran",
        "context.append_loop_event": "step.begin/step.end: a response (its usage); "
        "content.part: thinking or assistant text; tool.call: tool call; tool.result: its "
        "result and status (isError: error)",
        "context.append_message": "an assistant or tool message read like the loop events; a "
        "prompt's own copy and the CLI's injected reminders passed over",
        "usage.record": "the response's usage where its step.end has none (an interrupted step); "
        "a session-scoped total passed over (the responses count it)",
        "subagent.spawned": "the Agent call's sub-agent; its journal (agents/<id>/wire.jsonl) "
        "is the child transcript",
        "subagent.completed": "the sub-agent's end (its summary is the call's result)",
        "subagent.failed": "the sub-agent's failure (the call an error)",
        "turn.cancel": "abort marker; running calls cancelled",
        "turn.ended": "an error ending the turn as an assistant error",
        "turn.step.retrying": "a warning notice: the model request failed and is retried "
        "(its error, the attempt)",
        "context.apply_compaction": "compaction boundary (the summary; tokensBefore: the "
        "context's size before)",
        "context.clear": "compaction boundary (the context cleared)",
        "context.undo": "notice (messages undone)",
        "permission.set_mode": "notice when the mode changes (metadata permission_mode)",
        "(object)": "a session's state.json: the session is its agents/main/wire.jsonl",
    },
    ignored={
        "agent.message.appended": _UI,
        "agent.turn.started": _UI,
        "agent.turn.ended": f"{_UI} (turn.ended)",
        "subagent.started": f"{_UI} (subagent.spawned)",
        "prompt.completed": "the prompt's end (turn.ended records how it ended)",
        "prompt.aborted": "the prompt's abort (turn.cancel records it)",
        "prompt.accepted": "the prompt queued (turn.prompt records it)",
        "prompt.steered": "queued prompts sent into the running turn (its context message and "
        "turn.steer record them)",
        "turn.step.interrupted": "the step's interruption (turn.cancel records it)",
        "llm.tools_snapshot": f"{_TRACE}: the tool schemas sent",
        "runtime.set_binding": "the agent's workspace and runtime binding",
        "config.update": "configuration bookkeeping",
        "plugin.session_start": "plugins' session-start snapshot",
        "mcp.tools_discovered": "MCP tool listing",
        "token_counting.measured": "the CLI's own context-size estimate (usage.record and "
        "step.end hold the model's counts)",
        "token_counting.rebased": "the CLI's own context-size estimate",
        "token_counting.truncated": "the CLI's own context-size estimate",
        "token_counting.turn_recorded": "the CLI's own context-size estimate",
        "file_history.tracked": "a file's snapshot for undo (its edit is a tool call)",
        "file_history.checkpoint": "file snapshots at a turn's end, for undo",
        "full_compaction.begin": "a compaction starts (context.apply_compaction records it)",
        "full_compaction.cancel": "a compaction abandoned before it changed the context",
        "full_compaction.complete": "a compaction ends (context.apply_compaction records it)",
        "interaction.request": "an approval or question to the user; the call's result "
        "records the outcome",
        "interaction.resolved": "the user's answer; the call's result records the outcome",
        "permission.record_approval_result": "an approval's bookkeeping; the call's result "
        "records the outcome",
        "interruptionReminder.recorded": "bookkeeping of the reminder after an interrupt",
        "plan_mode.enter": "plan mode bookkeeping (its plan is a tool call)",
        "plan_mode.exit": "plan mode bookkeeping",
        "plan_mode.cancel": "plan mode bookkeeping",
        "plan.revision": "plan file bookkeeping",
        "goal.create": "goal bookkeeping (its tool calls show it)",
        "goal.update": "goal bookkeeping",
        "goal.clear": "goal bookkeeping",
        "forked": "the session was forked from another",
        "cron.add": "scheduled prompts (a run is a turn.prompt)",
        "cron.cursor": "scheduled prompts",
        "cron.delete": "scheduled prompts",
        "staleGuard.recorded": "file staleness bookkeeping",
        "staleGuard.cleared": "file staleness bookkeeping",
        "swarm_mode.enter": "swarm mode bookkeeping (its agents are sub-agents)",
        "swarm_mode.exit": "swarm mode bookkeeping",
        "tower_mode.enter": "tower mode bookkeeping",
        "tower_mode.exit": "tower mode bookkeeping",
        "task.started": "a background task (its call's result holds its output)",
        "task.terminated": "a background task ended",
        "task.waitDelivered": "a background task's notice delivered",
        "tools.register_user_tool": "tool registry bookkeeping",
        "tools.unregister_user_tool": "tool registry bookkeeping",
        "tools.set_active_tools": "tool registry bookkeeping",
        "tools.reset_active_tools": "tool registry bookkeeping",
        "tools.update_store": "the todo list store (its tool calls show it)",
    },
)
_KNOWN = frozenset(RECORDS.known())
#: ``context.append_message`` origins that are the CLI's own additions, not the conversation.
_INJECTED = frozenset({"injection", "hook_result", "retry"})


def _origin(value: Any) -> str | None:
    """A prompt's origin: ``{"kind": …}`` (2.x) or a bare string (the manifest's sketch)."""
    return as_text(value.get("kind")) if isinstance(value, MAPPINGS) else as_text(value)


def _input_text(parts: Any) -> str:
    """The text parts of a prompt's ``input`` (or a message's ``content``), joined."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    return "\n".join(p["text"] for p in parts if isinstance(p, MAPPINGS) and as_text(p.get("text")))


def _usage(raw: Any) -> Usage | None:
    """Kimi's ``TokenUsage``: ``inputOther`` is the prompt less its cached part."""
    return parted_usage(raw, "inputOther", "inputCacheRead", "inputCacheCreation")


@dataclass
class _Step:
    """One model response: the entries it wrote and the usage recorded for it."""

    entries: list[Entry] = field(default_factory=list)
    usage: Usage | None = None
    batch: str | None = None


class _Reader:
    """One agent's journal (the lead agent's, or a sub-agent's)."""

    def __init__(self, source: Source, transcript: Transcript, depth: int) -> None:
        self.source = source
        self.transcript = transcript
        self.depth = depth
        #: Sub-agents one level past the bound: their steps are recorded (a warning says where),
        #: so their completion does not mark them missing.
        self.too_deep: set[str] = set()
        self.model: str | None = None
        self.step = _Step()
        self.calls: dict[str, ToolCall] = {}
        self.open: dict[str, ToolCall] = {}
        self.prompt_ids: set[str] = set()
        #: The ids of the user messages read from the context: a steer's context copy is
        #: written before its ``turn.steer`` (``messageId``), which is then the same message.
        self.context_users: set[str] = set()
        self.cancelled = False
        self.mode: str | None = None
        self.recognised = False
        self.first_other: int | None = None

    @property
    def meta(self) -> dict[str, Any]:
        return self.transcript.metadata

    def _add(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def event(self, record: Mapping[str, Any], line: int) -> None:
        kind = record.get("type")
        if not isinstance(kind, str) or not kind:
            self.source.warn("a record without a type skipped", line, record_type="(object)")
            return
        if kind not in _KNOWN:
            self.first_other = self.first_other or line
            self.source.warn(f"unknown Kimi record {kind!r} skipped", line, record_type=kind)
            return
        self.recognised = True
        if kind in RECORDS.ignored:
            self.source.ignored(kind)
            return
        stamp = warned_timestamp(record.get("time"), ms_to_iso,
                                 lambda reason: self.source.warn(reason, line),
                                 f"the {kind} record", name="time",
                                 unit="ms since the epoch")  # fmt: skip
        getattr(self, "_" + kind.replace(".", "_"))(record, stamp, line)

    # --- the session ------------------------------------------------------------------------

    def _metadata(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        if as_text(record.get("protocol_version")):
            self.meta.setdefault("protocol_version", record["protocol_version"])
        started = warned_timestamp(record.get("created_at"), ms_to_iso,
                                   lambda reason: self.source.warn(reason, line),
                                   "the metadata record", name="created_at",
                                   unit="ms since the epoch")  # fmt: skip
        if started is not None:
            self.meta.setdefault("started_at", started)
        self.source.mapped("metadata")

    def _profile_bind(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        for key, name in (("systemPrompt", "system_prompt"), ("profileName", "profile"),
                          ("thinkingEffort", "thinking_effort")):  # fmt: skip
            if as_text(record.get(key)):
                self.meta.setdefault(name, record[key])
        self.source.mapped("profile.bind")

    def _llm_request(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        model = as_text(record.get("model"))
        if model is not None:
            self.model = model
            self.meta.setdefault("model", model)
        if as_text(record.get("provider")):
            self.meta.setdefault("provider", record["provider"])
        self.source.mapped("llm.request")

    def _permission_set_mode(self, record: Mapping[str, Any], stamp: str | None,
                             line: int) -> None:  # fmt: skip
        mode = as_text(record.get("mode"))
        if mode is not None and self.mode is not None and mode != self.mode:
            self._add(notice("reader.permission_mode", {"mode": mode}, subtype="mode_change",
                             timestamp=stamp))  # fmt: skip
        if mode is not None:
            self.mode = mode
            self.meta.setdefault("permission_mode", mode)
        self.source.mapped("permission.set_mode")

    # --- prompts ----------------------------------------------------------------------------

    def _turn_prompt(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self._close_step()
        self.cancelled = False
        if as_text(record.get("promptId")):
            self.prompt_ids.add(record["promptId"])
        self._user(_input_text(record.get("input")), _origin(record.get("origin")), stamp)
        self.source.mapped(str(record["type"]))

    def _turn_steer(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        """A prompt sent while the turn ran: the CLI appends it to the context first, then
        writes this record with the message's id (``messageId``), so it is shown once."""
        message_id = as_text(record.get("messageId"))
        if message_id is None or message_id not in self.context_users:
            self._close_step()
            self._user(_input_text(record.get("input")), _origin(record.get("origin")), stamp)
        if message_id is not None:
            self.prompt_ids.add(message_id)
        self.source.mapped("turn.steer")

    def _user(self, text: str, origin: str | None, stamp: str | None) -> None:
        message = UserMessage(text=text, timestamp=stamp)
        if origin is not None and origin != "user":
            message.meta["origin"] = origin
        self._add(message)

    # --- the agent loop ---------------------------------------------------------------------

    def _context_append_loop_event(self, record: Mapping[str, Any], stamp: str | None,
                                   line: int) -> None:  # fmt: skip
        event = record.get("event")
        kind = event.get("type") if isinstance(event, MAPPINGS) else None
        if not isinstance(event, MAPPINGS) or kind not in (
            "step.begin", "step.end", "content.part", "tool.call", "tool.result"
        ):  # fmt: skip
            self.source.warn(f"a loop event of unknown type {kind!r} skipped", line,
                             record_type="context.append_loop_event")  # fmt: skip
            return
        if kind == "step.begin":
            self._close_step()
            self.step.batch = as_text(event.get("uuid"))
        elif kind == "step.end":
            usage = _usage(event.get("usage"))
            self.step.usage = usage or self.step.usage
            reason = as_text(event.get("finishReason"))
            if reason == "interrupted":
                self._cancel_open()
            self._close_step()
        elif kind == "content.part":
            self._part(event.get("part"), stamp)
        elif kind == "tool.call":
            self._call(event.get("toolCallId"), event.get("name"), event.get("args"), stamp)
        else:
            result = event.get("result")
            self._result(event.get("toolCallId"), result if isinstance(result, MAPPINGS) else {},
                         stamp, line)  # fmt: skip
        self.source.mapped("context.append_loop_event")

    def _part(self, part: Any, stamp: str | None) -> None:
        if not isinstance(part, MAPPINGS):
            return
        entry: Entry | None = None
        if part.get("type") == "think" and as_text(part.get("think")):
            entry = Thinking(text=part["think"], timestamp=stamp)
        elif part.get("type") == "think" and as_text(part.get("encrypted")):
            entry = Thinking(form="encrypted", data=part["encrypted"], timestamp=stamp)
        elif part.get("type") == "text" and as_text(part.get("text")):
            entry = AssistantText(text=part["text"], model=self.model, timestamp=stamp)
        if entry is not None:
            self.step.entries.append(self._add(entry))

    def _call(self, call_id: Any, name: Any, args: Any, stamp: str | None) -> ToolCall:
        call = make_call(call_id, name, args, timestamp=stamp, batch_id=self.step.batch,
                         cwd=as_text(self.meta.get("cwd")))  # fmt: skip
        self.step.entries.append(self._add(call))
        if call.call_id:
            self.calls[call.call_id] = call
            self.open[call.call_id] = call
        return call

    def _result(self, call_id: Any, result: Mapping[str, Any], stamp: str | None,
                line: int) -> None:  # fmt: skip
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.source.warn(f"result for unknown tool call {call_id!r} skipped", line)
            return
        self.open.pop(call.call_id, None)
        output = result.get("output")
        text = stringify(output) if output is not None else None
        failed = result.get("isError") is True
        meta = dict(call.meta)
        if as_text(result.get("note")):
            meta["note"] = result["note"]
        duration = as_int(result.get("durationMs"))
        if duration is not None:
            meta["duration_ms"] = duration
        status = ("cancelled" if self.cancelled else "error") if failed else "success"
        if call.status == "cancelled":
            status = "cancelled"
        shown = text_result(text) if text is not None else call.result
        self.transcript.update(call, status=status, ended_at=stamp, meta=meta, result=shown)

    def _usage_record(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        # Written as the response ends, before its parts; the step's step.end repeats it.
        # A session-scoped record is a total, which the responses' own records already count.
        if record.get("usageScope", "turn") == "turn":
            self.step.usage = _usage(record.get("usage"))
        self.source.mapped("usage.record")

    def _close_step(self) -> None:
        step = self.step
        if step.usage is not None and attach_usage(step.entries, step.usage, self.transcript,
                                                    model=self.model) is None:  # fmt: skip
            self.source.warn("a response's usage with no entry to carry it: tokens not counted")
        self.step = _Step()

    def _cancel_open(self) -> None:
        for call in self.open.values():
            if call.status in ("unknown", "pending", "executing"):
                self.transcript.update(call, status="cancelled")
        self.open.clear()

    # --- context messages -------------------------------------------------------------------

    def _context_append_message(self, record: Mapping[str, Any], stamp: str | None,
                                line: int) -> None:  # fmt: skip
        message = record.get("message")
        if not isinstance(message, MAPPINGS):
            self.source.warn("a context message without a message skipped", line,
                             record_type="context.append_message")  # fmt: skip
            return
        role = message.get("role")
        origin = _origin(message.get("origin"))
        if role == "assistant":
            self._close_step()
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                self._part(part, stamp)
            if isinstance(content, str) and content:
                self._part({"type": "text", "text": content}, stamp)
            for raw in message.get("toolCalls") or []:
                if isinstance(raw, MAPPINGS):
                    self._call(raw.get("id"), raw.get("name"), raw.get("arguments"), stamp)
            self._close_step()
        elif role == "tool":
            result = {"output": _input_text(message.get("content")),
                      "isError": message.get("isError"), "note": message.get("note")}  # fmt: skip
            self._result(message.get("toolCallId"), result, stamp, line)
        elif (
            role == "user"
            and origin not in _INJECTED
            and message.get("id") not in (self.prompt_ids)
        ):
            self._user(_input_text(message.get("content")), origin, stamp)
            if as_text(message.get("id")):
                self.context_users.add(message["id"])
        # Else a prompt's own copy (its turn.prompt shows it), a reminder the CLI injected or a
        # system message: read and passed over, as RECORDS says.
        self.source.mapped("context.append_message")

    def _context_apply_compaction(self, record: Mapping[str, Any], stamp: str | None,
                                  line: int) -> None:  # fmt: skip
        summary = record.get("summary") or record.get("contextSummary")
        if isinstance(summary, MAPPINGS):
            summary = _input_text(summary.get("content"))
        boundary = CompactionBoundary(summary=as_text(summary), timestamp=stamp,
                                      pre_tokens=as_int(record.get("tokensBefore")))  # fmt: skip
        count = as_int(record.get("compactedCount")) or as_int(record.get("count"))
        if count is not None:
            boundary.meta["messages_compacted"] = count
        self._close_step()
        self._add(boundary)
        self.source.mapped("context.apply_compaction")

    def _context_clear(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self._close_step()
        self._add(CompactionBoundary(trigger="clear", timestamp=stamp))
        self.source.mapped("context.clear")

    def _context_undo(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        count = as_int(record.get("count"))
        key = "reader.undid_messages" if count is not None else "reader.undo"
        self._add(notice(key, {"count": count}, subtype="undo", timestamp=stamp))
        self.source.mapped("context.undo")

    # --- the end of a turn ------------------------------------------------------------------

    def _turn_cancel(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self.cancelled = True
        self._cancel_open()
        self._add(AbortMarker(reason=as_text(record.get("reason")), timestamp=stamp))
        self.source.mapped("turn.cancel")

    def _turn_step_retrying(self, record: Mapping[str, Any], stamp: str | None,
                            line: int) -> None:  # fmt: skip
        """A failed model request the CLI retries: not the turn's end (``turn.ended`` says
        that), so a warning, with the error and the attempt."""
        said = as_text(record.get("errorMessage")) or as_text(record.get("errorName"))
        attempt, most = as_int(record.get("nextAttempt")), as_int(record.get("maxAttempts"))
        key = ("reader.model_retrying.said" if said else "reader.model_retrying") + (
            ".attempt" if attempt and most else ""
        )
        params = {"said": said, "attempt": attempt, "most": most}
        self._add(notice(key, params, level="warning", subtype="api_retry", timestamp=stamp))
        self.source.mapped("turn.step.retrying")

    def _turn_ended(self, record: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self._close_step()
        error = record.get("error")
        if isinstance(error, MAPPINGS) or record.get("reason") == "failed":
            message = as_text(error.get("message")) if isinstance(error, MAPPINGS) else None
            entry = (AssistantError(message=message, timestamp=stamp) if message
                     else failure("reader.turn_failed", timestamp=stamp))  # fmt: skip
            if isinstance(error, MAPPINGS) and as_text(error.get("code")):
                entry.meta["error_code"] = error["code"]
            self._add(entry)
        elif record.get("reason") == "cancelled" and not self.cancelled:
            self._cancel_open()
            self._add(stop("reader.cancelled", timestamp=stamp))
        self.source.mapped("turn.ended")

    # --- sub-agents -------------------------------------------------------------------------

    def _subagent_spawned(self, record: Mapping[str, Any], stamp: str | None,
                          line: int) -> None:  # fmt: skip
        agent_id = as_text(record.get("subagentId"))
        call = self.calls.get(as_text(record.get("parentToolCallId")) or "")
        if call is None or agent_id is None:
            self.source.warn("a sub-agent not linked to the call that started it", line,
                             record_type="subagent.spawned")  # fmt: skip
            return
        args = call.args if isinstance(call.args, MAPPINGS) else {}
        agent = call.subagent = SubAgent(
            name=as_text(record.get("subagentName")),
            task=as_text(args.get("prompt")) or as_text(record.get("description")),
            agent_id=agent_id,
        )
        self._read_child(agent, line)
        self.source.mapped("subagent.spawned")

    def _read_child(self, agent: SubAgent, line: int) -> None:
        """The sub-agent's journal, ``agents/<subagentId>/wire.jsonl`` beside this one."""
        path = self.source.path
        agent_id = agent.agent_id or ""
        if path is None:
            agent.steps_missing = True
            return
        if not is_plain_name(agent_id):
            # Kimi Code names a sub-agent ``agent-<n>``: a folder named by any other id could
            # lie outside the session's (``..``, an absolute path), where a hostile journal
            # would have it read.
            agent.steps_missing = True
            self.source.warn(f"subagentId {agent_id!r} is not a plain name: its journal, in the "
                             "folder it would name beside this one's, is not looked for",
                             line)  # fmt: skip
            return
        journal = path.parent.parent / agent_id / path.name
        if not journal.is_file():
            agent.steps_missing = True
            self.source.warn(f"sub-agent {agent_id!r}: no journal {journal.name} beside this "
                             "one", line)  # fmt: skip
            return
        if self.depth >= MAX_DEPTH:  # sub-agents' journals nest down to every reader's bound
            instead = f"its journal {agent_id}/{journal.name} loads as a session of its own"
            self.source.warn(too_deep(f"sub-agent {agent_id!r}", self.depth + 1, instead), line)
            self.too_deep.add(agent_id)
            return
        try:
            child_source, stream = open_source(journal)
        except OSError as exc:
            agent.steps_missing = True
            self.source.warn(f"sub-agent {agent_id!r}: {exc}", line)
            return
        try:
            child = Transcript(metadata={"source_format": NAME, "agent_id": agent_id})
            if agent.name:
                child.metadata["agent_name"] = agent.name
            reader = _Reader(child_source, child, self.depth + 1)
            reader.meta["cwd"] = self.meta.get("cwd")
            read_events(child_source, reader.event, "a Kimi journal record")
            reader.finish()
        finally:
            if stream is not None:
                stream.close()
        join_warnings(self.source.warnings, child_source.warnings)
        self.source.accounting.merge(child_source.accounting)
        attach_child(agent, child)

    def _subagent_completed(self, record: Mapping[str, Any], stamp: str | None,
                            line: int) -> None:  # fmt: skip
        # The summary is the Agent call's result too; its usage sums the child's responses.
        agent = self._agent_of(record)
        if agent is not None and agent.transcript is None and agent.agent_id not in self.too_deep:
            agent.steps_missing = True
        self.source.mapped("subagent.completed")

    def _subagent_failed(self, record: Mapping[str, Any], stamp: str | None,
                         line: int) -> None:  # fmt: skip
        agent = self._agent_of(record)
        if agent is not None:
            error = record.get("error")
            message = error.get("message") if isinstance(error, MAPPINGS) else error
            agent.reason = as_text(message) or "failed"
        self.source.mapped("subagent.failed")

    def _agent_of(self, record: Mapping[str, Any]) -> SubAgent | None:
        agent_id = record.get("subagentId")
        for call in self.calls.values():
            if call.subagent is not None and call.subagent.agent_id == agent_id:
                return call.subagent
        return None

    def finish(self) -> Transcript:
        self._close_step()
        return self.transcript


def _session_facts(path: Path | None, meta: dict[str, Any]) -> None:
    """The session's id, working folder and title from ``state.json`` (``<session>/``, two
    folders above a journal): the journal does not hold them."""
    if path is None or path.parent.parent.name != "agents":
        return
    state = json_object_file(path.parent.parent.parent / "state.json")
    for key, name in (("id", "session_id"), ("cwd", "cwd"), ("title", "title")):
        if as_text(state.get(key)):
            meta.setdefault(name, state[key])


def _is_state(value: Any) -> bool:
    """A session's ``state.json``: ``{id: "session_…", version, cwd, agents: {main: …}}``."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("id"), str)
        and value["id"].startswith("session_")
        and isinstance(value.get("agents"), Mapping)
        and "cwd" in value
    )


def _classify(value: Any) -> int:
    if not isinstance(value, Mapping):
        return NOT_MINE
    if _is_state(value):
        return DISTINCTIVE
    kind = value.get("type")
    if kind == "metadata":
        return DISTINCTIVE if "protocol_version" in value and "created_at" in value else NOT_MINE
    if not isinstance(kind, str) or kind not in _KNOWN:
        return NOT_MINE
    return DISTINCTIVE if "agentId" in value or value.get("kind") == "event" else NOT_MINE


def detect(source: Source) -> Evidence:
    """Journal records: the ``metadata`` line, dotted types with an ``agentId``."""
    return Evidence.of_events(source, _classify, "no Kimi Code journal record (type, agentId)")


def read(source: Source) -> Transcript:
    """Every record in order (module docstring); sub-agents from their journals beside. A
    session's ``state.json`` is read as its lead agent's journal beside it."""
    if source.is_document and _is_state(source.document):
        return _read_state(source)
    transcript = Transcript(metadata={"source_format": NAME, "agent": "kimi"})
    _session_facts(source.path, transcript.metadata)
    reader = _Reader(source, transcript, 0)
    read_events(source, reader.event, "a Kimi journal record")
    if not reader.recognised:
        reason = "no Kimi Code journal record found"
        raise TranscriptFormatError(source.name, [NAME], reader.first_other, reason)
    return reader.finish()


#: A session folder's lead-agent journal, and the file beside ``agents/`` that marks the folder.
MAIN_JOURNAL = "agents/main/wire.jsonl"
STATE = "state.json"


def is_session_folder(folder: Path, files: list[str], dirs: list[str]) -> bool:
    """Whether ``folder`` (holding ``files`` and ``dirs``) is a Kimi Code session's
    (``~/.kimi-code/sessions/<workdir key>/<session id>/``): its ``state.json`` beside
    ``agents/``, whose lead agent's journal is the session (its sub-agents' are read from it)."""
    return STATE in files and "agents" in dirs and (folder / MAIN_JOURNAL).is_file()


def detect_path(path: Path) -> Evidence | None:
    """A session folder, told by its contents: its ``state.json`` is a Kimi Code session's
    (the folder's name proves nothing). None for a file, which is read as JSON records (a
    journal, or the ``state.json`` itself)."""
    if not path.is_dir():
        return None
    return Evidence(share=1.0, marks=2) if _is_state(json_object_file(path / STATE)) else None


def read_path(path: Path) -> Transcript:
    """A session folder (``load(folder)``) read as its lead agent's journal is, as a scan reads
    the folder's one row; a file (``load(path, format="kimi")``) as its JSON records."""
    if not path.is_dir():
        return read_file(path, read)
    journal = path / MAIN_JOURNAL
    if not journal.is_file() or journal.stat().st_size == 0:
        # A session cut short (the CLI stopped before its lead agent wrote a record) has no
        # journal to read: said of the folder the user named, not of a file they did not.
        said = "is empty" if journal.is_file() else "is missing"
        reason = f"a Kimi Code session folder whose {MAIN_JOURNAL} {said}"
        raise TranscriptFormatError(str(path), [NAME], None, reason)
    return read_file(journal, read)


def _read_state(source: Source) -> Transcript:
    """The session whose ``state.json`` ``source`` is: its lead agent's journal, the state's
    record accounted for, the journal's warnings and accounting joined to it."""
    for _line, _record in source.records():
        source.mapped("(object)")
    journal = source.path.parent / MAIN_JOURNAL if source.path is not None else None
    if journal is None or not journal.is_file():
        reason = f"a Kimi Code session state without its {MAIN_JOURNAL}"
        raise TranscriptFormatError(source.name, [NAME], 1, reason)
    child, stream = open_source(journal)
    try:
        transcript = read(child)
    finally:
        if stream is not None:
            stream.close()
    join_warnings(source.warnings, child.warnings)
    source.accounting.merge(child.accounting)
    return transcript
