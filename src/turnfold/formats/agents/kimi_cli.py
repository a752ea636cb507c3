"""The older Python Kimi CLI's sessions (``kimi-cli`` on PyPI, Moonshot AI, archived at 1.52.0):
``~/.kimi/sessions/<md5 of the work folder>/<session id>/``.

A session folder holds ``context.jsonl``, the model's context (``kimi_cli/soul/context.py``):
kosong ``Message`` lines ``{role, content, tool_calls, tool_call_id}`` (OpenAI-style; content a
string or ``think`` / ``text`` parts) and the CLI's own records, ``{"role": "_system_prompt"}``,
``{"role": "_checkpoint", "id"}`` and ``{"role": "_usage", "token_count"}``; and ``wire.jsonl``,
the UI's events as they happened (``kimi_cli/wire/``): a ``{"type": "metadata",
"protocol_version"}`` line, then ``{"timestamp": <s>, "message": {"type", "payload"}}`` (a
``timestamp`` that is no time is left out, said on its line). A sub-agent's pair is under
``subagents/<agent id>/``; ``-S <id>`` resumes a session, appending to both files.

The session is read from the wire where it has one: the context holds no result's error flag,
no token counts (``_usage`` is the context's size) and no time, loses a step that was
interrupted (its calls and results are appended only once they all end) and is rewritten by a
compaction, ``/clear`` or a checkpoint revert, while the wire keeps every event. Read there:

- ``TurnBegin`` / ``SteerInput`` → :class:`~turnfold.model.UserMessage` (``user_input``);
- ``StepBegin`` starts a response: its ``ContentPart`` ``think`` →
  :class:`~turnfold.model.Thinking`, ``text`` → :class:`~turnfold.model.AssistantText`;
  ``ToolCall`` (``function.name``, ``arguments``) → :class:`~turnfold.model.ToolCall`, a step's
  calls one batch;
  ``StatusUpdate`` with ``token_usage`` its usage (``input_other`` is the prompt less its
  cached part, as in the new CLI);
- ``ToolResult`` settles its call: ``return_value.output`` the result (its ``message`` where
  there is no output, else in ``meta["note"]``, and after the output of a failure: why it
  failed, "Command failed with exit code: 3."), ``is_error`` an ``error``;
- ``SubagentEvent`` (``parent_tool_call_id``, ``agent_id``, ``subagent_type``, ``event``): the
  ``Agent`` call's :class:`~turnfold.model.SubAgent`, its events read as a transcript of their own
  (a sub-agent's own sub-agents' in turn, down to :data:`~turnfold.nesting.MAX_DEPTH` levels;
  the events of one deeper are counted in a warning, not read);
- ``StepInterrupted`` → :class:`~turnfold.model.AbortMarker` (running calls ``cancelled``);
  ``TurnEnd`` after a step that made calls, too: the model never saw their results, as when
  Ctrl-C stops a command (``KimiSoul.run`` writes no ``StepInterrupted`` for a cancel, only
  the ``TurnEnd`` of its ``finally``), the step limit is reached or a call is rejected. A
  command of that step the Ctrl-C killed (its SIGINT reaches the command first: "Command failed
  with exit code: -2.") is ``cancelled`` too, not failed;
  ``CompactionEnd`` → :class:`~turnfold.model.CompactionBoundary`;
  ``ApprovalResponse`` → the call's ``meta["approval"]`` (a rejected call's result is its error).

A ``context.jsonl`` with no wire beside it (the CLI's early versions wrote none) is read
itself: ``user`` messages (the CLI's own ``<system>`` additions passed over; its compaction
summary a :class:`~turnfold.model.CompactionBoundary`), ``assistant`` messages, ``tool``
messages (an error is the ``<system>ERROR: …</system>`` part ``tool_result_to_message``
writes first). Beside a wire, its records are accounted for as ignored (the wire holds the
conversation), but ``_system_prompt``, read into ``metadata["system_prompt"]``; the working
folder it states (the session records it nowhere else) is ``metadata["cwd"]``, which the
calls' paths are shown relative to.

``load()`` reads a session from its folder too (``<session id>/``, whose context or wire says
it is this CLI's, whatever its name) as its ``context.jsonl`` (the wire where there is no
context), the one row a scan makes of the folder; a folder with nothing written in either is an
error naming the folder.

Its successor, Kimi Code CLI (``kimi`` format, :mod:`turnfold.formats.agents.kimi`), has another
vocabulary and folder; ``kimi migrate`` converts these sessions to it.

Detection: the context's ``_system_prompt`` / ``_checkpoint`` / ``_usage`` records (plain
messages alone are left to the OpenAI-style formats), or wire records ``{timestamp, message:
{type, payload}}`` of the CLI's types.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnfold.formats.agents.cline import ms_to_iso
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    as_text,
    parted_usage,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.gemini_parts import attach_child, make_call
from turnfold.formats.protocol import read_events
from turnfold.formats.source import Source, join_warnings, open_source, read_file
from turnfold.formats.wording import stop
from turnfold.model import (
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

NAME = "kimi-cli"
#: What the Kimi CLI keeps its secrets in, in ``~/.kimi`` (``$KIMI_SHARE_DIR``, moved under any
#: name: ``get_share_dir``, ``kimi_cli/share.py``), each as ``kimi-cli`` 1.52.0 writes it: the
#: OAuth tokens of each login (``credentials/<name>.json``, ``auth/oauth.py``: the folder's
#: every file, as Kimi Code's, so no other ``credentials/`` folder's file is looked at); its
#: settings ``config.toml`` (a provider's ``api_key``, ``config.py``), and the ``config.json``
#: they were kept in before, which ``_migrate_json_config_to_toml`` leaves as
#: ``config.json.bak``; the MCP servers' ``mcp.json`` (their ``headers`` and ``env``,
#: ``cli/mcp.py``) and their OAuth tokens under ``mcp-oauth/`` (a ``FileTreeStore`` of
#: ``py-key-value``, ``mcp_oauth.py``); and its plugins, ``plugins/<name>/``, each with the
#: config file that ``inject_config`` writes the provider's ``api_key`` into, under whatever
#: name the plugin's ``plugin.json`` gives it (``plugin/__init__.py``, ``plugin/manager.py``).
CREDENTIALS = Credentials(
    folders=frozenset({".kimi"}),
    files=frozenset({
        "credentials/**", "config.toml", "config.json", "config.json.bak", "mcp.json",
        "mcp-oauth/**", "plugins/**",
    }),
    variables=frozenset({"KIMI_SHARE_DIR"}),
)  # fmt: skip

CONTEXT = "context.jsonl"
WIRE = "wire.jsonl"
#: The Shell tool's message for a command SIGINT killed (``asyncio``'s return code -signal;
#: ``kimi_cli/tools/shell/__init__.py``).
_KILLED_BY_SIGINT = "Command failed with exit code: -2."
#: What ``kimi_cli/soul/message.py`` wraps the CLI's own text in, and marks a failed result with.
_SYSTEM, _ERROR = "<system>", "<system>ERROR: "
#: The working folder in the CLI's system prompt (``kimi_cli/agents/default/system.md``: "The
#: current working directory is `${KIMI_WORK_DIR}`.").
_WORK_DIR = re.compile(r"The current working directory is `([^`\n]+)`")
#: The first part of the user message a compaction leaves (``soul/compaction.py``).
_COMPACTED = "<system>Previous context has been compacted"

_UI = "UI state"
RECORDS = Records(
    mapped={
        "metadata": "the wire's protocol version (metadata)",
        "TurnBegin": "user message (user_input)",
        "SteerInput": "user message sent while the turn ran",
        "StepBegin": "a response begins (its parts and calls one batch)",
        "ContentPart": "think: thinking; text: assistant text",
        "ToolCall": "tool call (function name, arguments)",
        "ToolResult": "its call's result and status (return_value.is_error: error)",
        "StatusUpdate": "token_usage: the response's usage; the rest is UI state",
        "SubagentEvent": "the Agent call's sub-agent; its events are the child transcript",
        "StepInterrupted": "abort marker; running calls cancelled",
        "TurnEnd": "a turn's end; after a step that made calls (Ctrl-C, the step limit, a "
        "rejected call), an abort marker, running calls cancelled",
        "CompactionEnd": "compaction boundary",
        "ApprovalRequest": "an approval asked for: the call its answer is about",
        "ApprovalResponse": "the call's meta approval (a rejected call's result is its error)",
        "_system_prompt": "metadata system_prompt",
        "user": "user message (the CLI's <system> additions passed over, its compaction summary "
        "a compaction boundary); beside a wire, the wire's TurnBegin shows it",
        "assistant": "thinking, assistant text, tool calls; beside a wire, its events show them",
        "tool": "its call's result, an error where it starts <system>ERROR:; beside a wire, the "
        "wire's ToolResult shows it",
    },
    ignored={
        "StepRetry": "a response retried (the retry is a response of its own)",
        "CompactionBegin": "a compaction starts (CompactionEnd marks it)",
        "ToolCallPart": "a call's streamed argument deltas (ToolCall holds the whole call)",
        "QuestionRequest": "a question to the user (its call's result holds the answer)",
        "QuestionResponse": "the user's answer (its call's result holds it)",
        "HookTriggered": "hook bookkeeping",
        "HookResolved": "hook bookkeeping (a blocked call's result says so)",
        "HookRequest": "hook bookkeeping",
        "HookResponse": "hook bookkeeping",
        "MCPLoadingBegin": _UI,
        "MCPLoadingEnd": _UI,
        "Notification": "a background task's notice to the UI",
        "PlanDisplay": "a plan shown (its tool call holds it)",
        "BtwBegin": "a side question outside the conversation",
        "BtwEnd": "a side question's answer outside the conversation",
        "_checkpoint": "a restore point for a revert; no content",
        "_usage": "the context's size in tokens after a response, not the response's usage",
        "system": "a system message (the system prompt is _system_prompt)",
    },
)
_WIRE_TYPES = frozenset(RECORDS.known()) - {"_system_prompt", "user", "assistant", "tool",
                                            "_checkpoint", "_usage", "system"}  # fmt: skip
_MARK_ROLES = frozenset({"_system_prompt", "_checkpoint", "_usage"})
_MESSAGE_ROLES = frozenset({"user", "assistant", "tool", "system"})


def _stamp(seconds: Any) -> str | None:
    valid = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    return ms_to_iso(seconds * 1000) if valid else None


def _parts_text(content: Any, *, kind: str = "text") -> list[str]:
    """The texts of ``content``: a string, or kosong parts (``text``, ``think``)."""
    if isinstance(content, str):
        return [content] if content and kind == "text" else []
    if not isinstance(content, list):
        return []
    return [p[kind] for p in content if isinstance(p, MAPPINGS) and p.get("type") == kind
            and as_text(p.get(kind))]  # fmt: skip


def _usage(raw: Any) -> Usage | None:
    """kosong's ``TokenUsage``: ``input_other`` is the prompt less its cached part."""
    return parted_usage(raw, "input_other", "input_cache_read", "input_cache_creation")


@dataclass
class _Step:
    """One model response: its entries, its usage, its batch."""

    entries: list[Entry] = field(default_factory=list)
    usage: Usage | None = None
    batch: str | None = None


class _Reader:
    """One agent's events (the wire's, or a sub-agent's nested ones) or context messages."""

    def __init__(self, source: Source, transcript: Transcript, depth: int = 0) -> None:
        self.source = source
        self.transcript = transcript
        self.depth = depth
        self.step = _Step()
        self.steps = 0
        self.calls: dict[str, ToolCall] = {}
        self.open: dict[str, ToolCall] = {}
        self.children: dict[str, _Reader] = {}
        #: The sub-agents nested past :data:`~turnfold.nesting.MAX_DEPTH`, by their call's id:
        #: the lines of their events, which are not read (:meth:`_too_deep`).
        self.past_bound: dict[str, list[int]] = {}
        #: An approval request's id → the call it asks about.
        self.approvals: dict[str, str] = {}
        self.recognised = False
        #: A sub-agent's events are lines of its parent's wire, accounted for there.
        self.accounts = depth == 0

    def _add(self, entry: Entry) -> Entry:
        entry = self.transcript.append(entry)
        self.step.entries.append(entry)
        return entry

    def _close_step(self) -> None:
        step = self.step
        if step.usage is not None and attach_usage(step.entries, step.usage,
                                                    self.transcript) is None:  # fmt: skip
            self.source.warn("a response's usage with no entry to carry it: tokens not counted")
        self.step = _Step()

    def _begin_step(self) -> None:
        self._close_step()
        self.steps += 1
        self.step.batch = f"step-{self.depth}-{self.steps}"

    def _call(self, raw: Mapping[str, Any], stamp: str | None) -> None:
        function = raw.get("function")
        function = function if isinstance(function, MAPPINGS) else {}
        call = make_call(raw.get("id"), function.get("name"), function.get("arguments"),
                         timestamp=stamp, batch_id=self.step.batch,
                         cwd=as_text(self.transcript.metadata.get("cwd")))  # fmt: skip
        self._add(call)
        if call.call_id:
            self.calls[call.call_id] = call
            self.open[call.call_id] = call

    def _settle(self, call_id: Any, text: str | None, failed: bool, note: str | None,
                stamp: str | None, line: int) -> None:  # fmt: skip
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.source.warn(f"result for unknown tool call {call_id!r} skipped", line)
            return
        self.open.pop(call.call_id, None)
        meta = dict(call.meta)
        if note:
            meta["note"] = note
            if failed and text:  # why it failed, which the output alone does not say
                text = f"{text.rstrip(chr(10))}\n{note}"
        status = "error" if failed else "success"
        if call.status == "cancelled":
            status = "cancelled"
        self.transcript.update(call, status=status, ended_at=stamp, meta=meta,
                               result=text_result(text))  # fmt: skip

    def _abort(self, reason: str, stamp: str | None, calls: list[ToolCall]) -> None:
        """The turn stopped: its running calls are ``cancelled``, and so is a command of the
        stopped step that Ctrl-C killed first (the terminal's SIGINT reaches the command's
        process group before the soul's cancel, so the Shell tool returns its exit code -2,
        "Command failed with exit code: -2.", and the turn ends): the user stopped it, it
        did not fail."""
        for call in self.open.values():
            if call.status in ("unknown", "pending", "executing"):
                self.transcript.update(call, status="cancelled")
        self.open.clear()
        for call in calls:
            said = call.result.text if call.result is not None else None
            if call.status == "error" and said and said.endswith(_KILLED_BY_SIGINT):
                self.transcript.update(call, status="cancelled")
        self.transcript.append(stop(reason, timestamp=stamp))

    def finish(self) -> Transcript:
        self._close_step()
        for call_id, child in self.children.items():
            agent = self.calls[call_id].subagent
            if agent is not None:
                attach_child(agent, child.finish())
        for call_id, lines in self.past_bound.items():
            agent = self.calls[call_id].subagent
            named = agent.agent_id if agent is not None else None
            what = f"sub-agent {named or '(no id)'!r} of call {call_id}"
            if len(lines) == 1:
                instead = f"its 1 event (line {lines[0]}) is not read"
            else:
                instead = f"its {len(lines):,} events (lines {lines[0]}-{lines[-1]}) are not read"
            self.source.warn(too_deep(what, self.depth + 1, instead), lines[0])
        return self.transcript

    # --- the wire ---------------------------------------------------------------------------

    def wire_record(self, record: Mapping[str, Any], line: int) -> None:
        if record.get("type") == "metadata":
            if as_text(record.get("protocol_version")):
                self.transcript.metadata.setdefault("protocol_version", record["protocol_version"])
            self.recognised = True
            self.source.mapped("metadata")
            return
        message = record.get("message")
        if not isinstance(message, MAPPINGS) or not isinstance(message.get("type"), str):
            self.source.warn("a wire record without a message type skipped", line,
                             record_type="(object)")  # fmt: skip
            return
        self.recognised = True
        stamp = warned_timestamp(record.get("timestamp"), _stamp,
                                 lambda reason: self.source.warn(reason, line),
                                 f"the {message['type'][:80]} wire event", name="timestamp",
                                 unit="seconds since the epoch")  # fmt: skip
        self.event(message, stamp, line)

    def event(self, message: Mapping[str, Any], stamp: str | None, line: int) -> None:
        kind = message["type"]
        payload = message.get("payload")
        payload = payload if isinstance(payload, MAPPINGS) else {}
        if kind not in _WIRE_TYPES or kind == "metadata":
            self.source.warn(f"unknown Kimi CLI wire event {kind!r} skipped", line,
                             record_type=kind)  # fmt: skip
            return
        if kind not in RECORDS.ignored:
            getattr(self, "_" + kind)(payload, stamp, line)
        if self.accounts:
            self.source.note(kind, "ignored" if kind in RECORDS.ignored else "mapped")

    def _TurnBegin(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self._close_step()
        text = "\n".join(_parts_text(payload.get("user_input")))
        self.transcript.append(UserMessage(text=text, timestamp=stamp))

    def _SteerInput(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        text = "\n".join(_parts_text(payload.get("user_input")))
        entry = UserMessage(text=text, timestamp=stamp)
        entry.meta["steer"] = True
        self.transcript.append(entry)

    def _StepBegin(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self._begin_step()

    def _ContentPart(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        if payload.get("type") == "think" and as_text(payload.get("think")):
            self._add(Thinking(text=payload["think"], timestamp=stamp))
        elif payload.get("type") == "think" and as_text(payload.get("encrypted")):
            self._add(Thinking(form="encrypted", data=payload["encrypted"], timestamp=stamp))
        elif payload.get("type") == "text" and as_text(payload.get("text")):
            self._add(AssistantText(text=payload["text"], timestamp=stamp))

    def _ToolCall(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self._call(payload, stamp)

    def _ToolResult(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        value = payload.get("return_value")
        value = value if isinstance(value, MAPPINGS) else {}
        output = value.get("output")
        text = stringify(output) if output not in (None, "", []) else None
        if isinstance(output, list):  # content parts: their texts
            text = "\n".join(_parts_text(output)) or text
        message = as_text(value.get("message"))
        # The tool's message ("Command failed with exit code: 3.") is shown where the output is
        # empty (an edit, a failure without output), else kept beside it.
        if text is None:
            text, message = message, None
        self._settle(payload.get("tool_call_id"), text, value.get("is_error") is True, message,
                     stamp, line)  # fmt: skip

    def _StatusUpdate(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        usage = _usage(payload.get("token_usage"))
        if usage is not None:
            self.step.usage = usage

    def _TurnEnd(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        # A turn the model finished ends on a step without calls (its answer). One that ends on
        # a step with calls was stopped before the model saw their results: a cancel writes no
        # StepInterrupted, only this TurnEnd (KimiSoul.run's ``finally``).
        calls = [entry for entry in self.step.entries if isinstance(entry, ToolCall)]
        self._close_step()
        if calls:
            self._abort("reader.stopped_before_results_seen", stamp, calls)

    def _StepInterrupted(self, payload: Mapping[str, Any], stamp: str | None,
                         line: int) -> None:  # fmt: skip
        calls = [entry for entry in self.step.entries if isinstance(entry, ToolCall)]
        self._close_step()
        self._abort("reader.interrupted", stamp, calls)

    def _CompactionEnd(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        self._close_step()
        self.transcript.append(CompactionBoundary(timestamp=stamp))

    def _ApprovalResponse(self, payload: Mapping[str, Any], stamp: str | None,
                          line: int) -> None:  # fmt: skip
        call = self.calls.get(self.approvals.get(str(payload.get("request_id")), ""))
        if call is not None and as_text(payload.get("response")):
            self.transcript.update(call, meta={**call.meta, "approval": payload["response"]})

    def _ApprovalRequest(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        if as_text(payload.get("id")) and as_text(payload.get("tool_call_id")):
            self.approvals[payload["id"]] = payload["tool_call_id"]

    def _SubagentEvent(self, payload: Mapping[str, Any], stamp: str | None, line: int) -> None:
        agent_id = as_text(payload.get("agent_id")) or ""
        inner = payload.get("event")
        call = self.calls.get(as_text(payload.get("parent_tool_call_id")) or "")
        if (
            call is None
            or not isinstance(inner, MAPPINGS)
            or not isinstance(inner.get("type"), str)
        ):
            self.source.warn("a sub-agent event not linked to the call that started it", line,
                             record_type="SubagentEvent")  # fmt: skip
            return
        child = self.children.get(call.call_id)
        if child is None:
            if self.depth >= MAX_DEPTH:
                self._too_deep(call, payload, line)
                return
            transcript = Transcript(metadata={"source_format": NAME, "agent_id": agent_id})
            transcript.metadata["cwd"] = self.transcript.metadata.get("cwd")
            child = self.children[call.call_id] = _Reader(self.source, transcript, self.depth + 1)
            args = call.args if isinstance(call.args, MAPPINGS) else {}
            call.subagent = SubAgent(
                name=as_text(payload.get("subagent_type")),
                task=as_text(args.get("prompt")),
                agent_id=agent_id,
            )
        child.event(inner, stamp, line)

    def _too_deep(self, call: ToolCall, payload: Mapping[str, Any], line: int) -> None:
        """An event of a sub-agent one level deeper than sub-agents nest: its call names it,
        its events are counted for the warning :meth:`finish` gives (they are lines of the
        lead's wire, read nowhere else)."""
        lines = self.past_bound.setdefault(call.call_id, [])
        if not lines:
            args = call.args if isinstance(call.args, MAPPINGS) else {}
            call.subagent = SubAgent(
                name=as_text(payload.get("subagent_type")),
                task=as_text(args.get("prompt")),
                agent_id=as_text(payload.get("agent_id")),
            )
        lines.append(line)

    # --- the context, where there is no wire --------------------------------------------------

    def system_prompt(self, text: str) -> None:
        """The context's system prompt, and the working folder it states."""
        metadata = self.transcript.metadata
        metadata.setdefault("system_prompt", text)
        found = _WORK_DIR.search(text)
        if found is not None:
            metadata.setdefault("cwd", found.group(1))

    def context_record(self, record: Mapping[str, Any], line: int) -> None:
        role = record.get("role")
        if not isinstance(role, str) or role not in RECORDS.known() or role in _WIRE_TYPES:
            self.source.warn(f"unknown Kimi CLI context record {role!r} skipped", line,
                             record_type=str(role))  # fmt: skip
            return
        self.recognised = True
        if role == "_system_prompt":
            if as_text(record.get("content")):
                self.system_prompt(record["content"])
            self.source.mapped(role)
        elif role in RECORDS.ignored:
            self.source.ignored(role)
        else:
            getattr(self, "_context_" + role)(record, line)
            self.source.mapped(role)

    def _context_user(self, record: Mapping[str, Any], line: int) -> None:
        content = record.get("content")
        texts = _parts_text(content)
        self._close_step()
        if texts and texts[0].startswith(_COMPACTED):
            summary = "\n".join(texts[1:]) or None
            self.transcript.append(CompactionBoundary(summary=summary))
        elif texts and all(t.lstrip().startswith(_SYSTEM) for t in texts):
            pass  # the CLI's own reminder or checkpoint mark, never the user's words
        else:
            self.transcript.append(UserMessage(text="\n".join(texts)))

    def _context_assistant(self, record: Mapping[str, Any], line: int) -> None:
        self._begin_step()
        content = record.get("content")
        for think in _parts_text(content, kind="think"):
            self._add(Thinking(text=think))
        for text in _parts_text(content):
            self._add(AssistantText(text=text))
        for raw in record.get("tool_calls") or []:
            if isinstance(raw, MAPPINGS):
                self._call(raw, None)

    def _context_tool(self, record: Mapping[str, Any], line: int) -> None:
        texts = _parts_text(record.get("content"))
        failed = bool(texts) and texts[0].startswith(_ERROR)
        note = None
        if texts and texts[0].startswith(_SYSTEM) and texts[0].endswith("</system>"):
            note = texts[0][len(_SYSTEM) : -len("</system>")]
            texts = texts[1:] or [note]
        self._settle(record.get("tool_call_id"), "\n".join(texts) or None, failed,
                     note if texts != [note] else None, None, line)  # fmt: skip


def _classify(value: Any) -> int:
    if not isinstance(value, Mapping):
        return NOT_MINE
    role = value.get("role")
    if isinstance(role, str):
        return DISTINCTIVE if role in _MARK_ROLES else READABLE * (role in _MESSAGE_ROLES)
    if value.get("type") == "metadata":
        has_version = isinstance(value.get("protocol_version"), str)
        return DISTINCTIVE if has_version and "created_at" not in value else NOT_MINE
    message = value.get("message")
    if isinstance(message, Mapping) and "timestamp" in value and "payload" in message:
        kind = message.get("type")
        return DISTINCTIVE if isinstance(kind, str) and kind in _WIRE_TYPES else READABLE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """A context's ``_system_prompt`` / ``_checkpoint`` / ``_usage`` records, or wire records;
    OpenAI-style messages with none of these marks are not claimed."""
    evidence = Evidence.of_events(source, _classify, "no Kimi CLI context or wire record")
    if evidence.marks == 0:
        return Evidence.none("no Kimi CLI context or wire record")
    return evidence


def _wire_beside(path: Path | None) -> Path | None:
    """The wire beside a context, where it holds more than its metadata line."""
    if path is None or path.name != CONTEXT:
        return None
    wire = path.with_name(WIRE)
    try:
        with wire.open(encoding="utf-8", errors="replace") as handle:
            lines = [line for line in (handle.readline(), handle.readline()) if line.strip()]
    except OSError:
        return None
    return wire if len(lines) > 1 else None


def read(source: Source) -> Transcript:
    """The session's wire (the file itself, or the one beside a ``context.jsonl``), else the
    context's messages (module docstring)."""
    transcript = Transcript(metadata={"source_format": NAME, "agent": "kimi-cli"})
    if source.path is not None:
        transcript.metadata["session_id"] = source.path.parent.name
    reader = _Reader(source, transcript)
    wire = _wire_beside(source.path)
    head = source.head_values()
    first = head[0] if head else None
    if isinstance(first, Mapping) and "role" not in first:
        read_events(source, reader.wire_record, "a Kimi CLI wire record")
    elif wire is None:
        read_events(source, reader.context_record, "a Kimi CLI context record")
    else:
        _read_with_wire(source, reader, wire)
    if not reader.recognised:
        reason = "no Kimi CLI context or wire record found"
        raise TranscriptFormatError(source.name, [NAME], 1, reason)
    return reader.finish()


def _read_with_wire(source: Source, reader: _Reader, wire: Path) -> None:
    """A context whose session has a wire: the system prompt from the context, every other
    record of it accounted for as the wire's (RECORDS), the conversation from the wire."""
    for _line, record in source.records():
        role = record.get("role") if isinstance(record, Mapping) else None
        if role == "_system_prompt" and as_text(record.get("content")):
            reader.system_prompt(record["content"])
            source.mapped("_system_prompt")
        elif isinstance(role, str) and role in RECORDS.ignored:
            source.ignored(role)
        elif isinstance(role, str) and role in RECORDS.mapped and role not in _WIRE_TYPES:
            source.mapped(role)  # the same message as the wire's events, which are read
        else:
            source.warn(f"unknown Kimi CLI context record {role!r} skipped", _line,
                        record_type=str(role))  # fmt: skip
    wire_source, stream = open_source(wire)
    try:
        wire_reader = _Reader(wire_source, reader.transcript)
        read_events(wire_source, wire_reader.wire_record, "a Kimi CLI wire record")
        reader.recognised = True
        wire_reader.finish()
    finally:
        if stream is not None:
            stream.close()
    join_warnings(source.warnings, wire_source.warnings)
    source.accounting.merge(wire_source.accounting)


def _reads_as_mine(path: Path) -> bool:
    """Whether the first records of the file at ``path`` carry this CLI's marks."""
    if not path.is_file():
        return False
    try:
        source, stream = open_source(path)
    except OSError:
        return False
    try:
        found = detect(source)
    finally:
        if stream is not None:
            stream.close()
    return found.fits and found.marks > 0


def detect_path(path: Path) -> Evidence | None:
    """A session folder, told by its contents: its ``context.jsonl`` or ``wire.jsonl`` holds
    this CLI's records (the folder's name, a bare id, proves nothing). None for a file, which
    is read as JSON records."""
    if not path.is_dir():
        return None
    mine = _reads_as_mine(path / CONTEXT) or _reads_as_mine(path / WIRE)
    return Evidence(share=1.0, marks=2) if mine else None


def read_path(path: Path) -> Transcript:
    """A session folder (``load(folder)``) read as its ``context.jsonl`` is (with the wire
    beside it), as a scan reads the folder's one row; its wire where the CLI left no context.
    A file (``load(path, format="kimi-cli")``) as its JSON records."""
    if not path.is_dir():
        return read_file(path, read)
    context, wire = path / CONTEXT, path / WIRE
    if context.is_file() and (context.stat().st_size > 0 or _wire_beside(context) is not None):
        return read_file(context, read)
    if not context.is_file() and wire.is_file() and wire.stat().st_size > 0:
        return read_file(wire, read)
    # The CLI makes the folder and an empty context.jsonl when a session starts, and writes
    # the wire once it runs: a session never run, or cut short, has nothing to read.
    said = "is empty" if context.is_file() else "is missing"
    reason = f"a Kimi CLI session folder whose {CONTEXT} {said}, with no {WIRE} events beside it"
    raise TranscriptFormatError(str(path), [NAME], None, reason)


def is_session_folder(files: list[str]) -> bool:
    """Whether a folder holding ``files`` is a Kimi CLI session's
    (``~/.kimi/sessions/<hash>/<id>/``): its ``context.jsonl`` is the session, the ``wire.jsonl``
    beside it read with it, its ``subagents/`` from the wire's sub-agent events."""
    return CONTEXT in files and WIRE in files
