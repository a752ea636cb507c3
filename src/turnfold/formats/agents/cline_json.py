"""The Cline CLI's ``--json`` output (spec H-5): what ``cline --json "<prompt>"`` (CLI 3.x, on the
Cline SDK) prints, one JSON object a line, each with ``ts`` (ISO 8601) and ``type``
(``emitJsonLine``, ``apps/cli/src/utils/output.ts``).

Not the session files the CLI keeps in ``~/.cline/data/sessions`` (the ``cline-messages``
format): these are the runtime's live events, written by ``apps/cli/src/utils/events.ts``
(``handleEvent``), ``utils/hooks.ts`` and ``runtime/run-agent.ts``:

- ``agent_event {event}``, an ``AgentEvent`` (``sdk/packages/shared/src/agents/types.ts``, made
  by ``RuntimeEventAdapter``, ``sdk/packages/core/src/runtime/orchestration/
  runtime-event-adapter.ts``):

  - ``content_start``/``content_end`` of ``text`` and ``reasoning``: the starts are the
    model's deltas, the end the whole text, an :class:`~turnfold.model.AssistantText` or
    :class:`~turnfold.model.Thinking` (deltas with no end, a stream cut off, are joined);
  - ``content_start`` of ``tool`` (``toolName``, ``toolCallId``, ``input``) a
    :class:`~turnfold.model.ToolCall`, one batch per iteration; its ``content_end``
    (``output``, ``error``, ``durationMs``) settles it by id with the rules of the messages
    file, whose ``tool_result`` holds the same output (:func:`~turnfold.formats.agents.
    cline_messages.outcome_of`: a ``ToolOperationResult`` with ``success: false`` fails the
    call, the user's interrupt cancels it, a denial is ``cancelled``); ``content_update``
    (a command's output as it streams) is the result of a call that never ended;
  - ``content_end`` of ``media``: an image the model generated, or a line naming it;
  - ``usage`` the counts of one model call (``inputTokens``, the cached tokens included, as
    the messages file's ``metrics``; ``cacheReadTokens``/``cacheWriteTokens``, which the
    adapter leaves out when zero; ``cost``), put on that iteration's entries
    (:func:`~turnfold.usage.attach_usage`), the cost as ``meta["cost_usd"]``;
  - ``notice`` a :class:`~turnfold.model.SystemNotice` (``reason`` its subtype), ``error`` an
    :class:`~turnfold.model.AssistantError` (a recoverable one a warning notice), ``done`` the
    agent's end: its ``reason`` (``completed``, ``aborted``, ``error``…) and ``usage``, the
    agent's own total;
  - ``iteration_start``/``iteration_end`` bound a model call and its tools;

- ``hook_event {hookEventName, agentId, taskId, parentAgentId}``: which agent the events after
  it belong to. The agent events carry no agent id (the CLI prints the SDK's events of the lead
  and of its sub-agents on one stdout), so each is the agent's of the last hook event. An
  ``agent_start`` with a ``parentAgentId`` starts a sub-agent: its events make its own
  transcript, nested under the parent's ``spawn_agent`` call that is still running
  (F-7; its line's tokens from the call's output, as the messages file's);
- ``run_start`` (model, provider, session id), ``run_result`` (``finishReason``, ``usage``:
  the lead's own total, ``aggregateUsage``, ``durationMs``, ``model``), ``run_aborted`` → metadata
  (H-6: ``outcome``, ``usage``, ``cost_usd``, ``duration_ms``, ``model``,
  ``model_provider``; each agent's cost its own calls' alone, ``cost_includes_subagents``
  ``False``; ``aborted`` → ``cancelled``, another reason than ``completed`` →
  ``error``). The run's span is ``metadata["started_at"]``, the first line's ``ts`` (the CLI
  prints it as the run starts), to ``metadata["ended_at"]``, the ``ts`` of its ``run_result``
  or ``run_aborted``. A ``ts`` that is no time is left out, said on its line;
- ``team_event`` and ``team_restored``: agent teams' progress, left out (the teammates' own
  output is not printed: ``subscribeToAgentEvents`` drops it).

The stream holds no prompt (the CLI does not echo it), no working folder and no system prompt.
A stream that ends before its ``done`` (the CLI killed) leaves its last calls ``unknown``, with
a warning.

Detection: ``agent_event`` with an ``event`` object, ``hook_event`` with ``hookEventName``,
``run_result`` with ``finishReason``: no other format writes these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from turnfold.formats.agents.cline_messages import (
    agent_answer,
    describe,
    media_of,
    outcome_of,
    subagent_of,
)
from turnfold.formats.catalog import Records
from turnfold.formats.common import checked_timestamp, counted_usage, stringify, warned_timestamp
from turnfold.formats.common import text_result as make_result
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.protocol import read_events
from turnfold.formats.source import Source
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    ImageData,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import Tokens, add_into, attach_usage, counts_of, usage_carrier

NAME = "cline-json"

RECORDS = Records(
    mapped={
        "agent_event/content_start": "a tool call (tool); text and reasoning deltas, joined "
        "when no end follows",
        "agent_event/content_end": "assistant text, thinking, generated media; a call's "
        "outcome and result",
        "agent_event/content_update": "a running command's output, the result of a call "
        "that never ended",
        "agent_event/usage": "the token counts and cost of one model call",
        "agent_event/notice": "a notice of the runtime (recovery, stop, status)",
        "agent_event/error": "an error (a recoverable one as a warning notice)",
        "agent_event/done": "an agent's end: its reason and total usage",
        "hook_event": "which agent the next events belong to; a sub-agent's start",
        "run_start": "metadata: model, provider, session id",
        "run_result": "metadata: outcome, the run's usage and cost, duration, model",
        "run_aborted": "metadata: the run was aborted",
    },
    ignored={
        "agent_event/iteration_start": "a model call starts: its events follow",
        "agent_event/iteration_end": "a model call's tools are done: its events precede",
        "run_abort_requested": "the user asked to abort; run_aborted or the events tell the end",
        "team_event": "an agent team's progress: the team tools' calls hold the outcomes",
        "team_restored": "an agent team's state was reloaded",
    },
)

_OUTCOMES = {"completed": None, "aborted": "cancelled"}
_IGNORED = frozenset(RECORDS.ignored)


# --- detection ------------------------------------------------------------------------------


def _classify(value: Any) -> int:
    if not isinstance(value, Mapping) or not isinstance(value.get("ts"), str):
        return NOT_MINE
    kind = value.get("type")
    if not isinstance(kind, str):
        return NOT_MINE
    if kind == "agent_event":
        event = value.get("event")
        return DISTINCTIVE if isinstance(event, Mapping) and "type" in event else NOT_MINE
    if kind == "hook_event":
        return DISTINCTIVE if isinstance(value.get("hookEventName"), str) else NOT_MINE
    if kind == "run_result":
        return DISTINCTIVE if "finishReason" in value else NOT_MINE
    if kind == "run_start":
        return DISTINCTIVE if "providerId" in value and "modelId" in value else NOT_MINE
    return READABLE if kind in _IGNORED or kind == "run_aborted" else NOT_MINE


_LACKS = "no Cline CLI --json event (agent_event, hook_event, run_result)"


def detect(source: Source) -> Evidence:
    """``--json`` events: JSON lines, or one JSON array of them."""
    return Evidence.of_events(source, _classify, _LACKS)


def _event_named(record: Mapping[str, Any]) -> str:
    """An event as a warning names it: its type (an agent event's with its own) and its call."""
    kind, event = record.get("type"), record.get("event")
    name = kind[:80] if isinstance(kind, str) and kind else "(object)"
    event = event if isinstance(event, Mapping) else {}
    sub = event.get("type")
    if kind == "agent_event" and isinstance(sub, str):
        name = f"agent_event/{sub[:80]}"
    call_id = event.get("toolCallId")
    if isinstance(call_id, str) and call_id:
        return f"the {name} event of call {call_id[:80]!r}"
    return f"the {name} event"


# --- reading --------------------------------------------------------------------------------


@dataclass
class _Agent:
    """One agent's part of the stream: the lead's, or a sub-agent's."""

    transcript: Transcript
    parent: str | None = None
    calls: dict[str, ToolCall] = field(default_factory=dict)
    #: The entries of the model call under way (its usage goes on them) and its batch.
    turn: list[Entry] = field(default_factory=list)
    batch: str | None = None
    #: Deltas of the text and reasoning being streamed, with the first one's time.
    deltas: dict[str, tuple[list[str], str | None]] = field(default_factory=dict)
    #: The streamed output of each call not yet ended.
    streamed: dict[str, list[str]] = field(default_factory=dict)
    #: The counts and cost of the model call under way: they arrive before its text ends and
    #: its calls start, and go on its entries when it ends.
    counts: Tokens = field(default_factory=dict)
    cost: float | None = None
    costs: list[float] = field(default_factory=list)
    done: bool = False

    def add(self, entry: Entry) -> Entry:
        self.turn.append(self.transcript.append(entry))
        return entry


class _Reader:
    """The events of one stream, each given to the agent of the last hook event."""

    def __init__(self, source: Source) -> None:
        self.source = source
        lead = Transcript(metadata={"source_format": NAME, "agent": "cline"})
        self.lead = _Agent(lead)
        self.agents: dict[str | None, _Agent] = {None: self.lead}
        self.current: str | None = None  # the agent id of the last hook event; None: the lead
        #: A run_result or run_aborted was read: the run ended (its agent may not say done).
        self.ended = False
        self.lead_id: str | None = None

    def event(self, record: Mapping[str, Any], line: int) -> None:
        """One event, read without a ``ts`` that is no time, which is said on its line."""
        stamp = warned_timestamp(record.get("ts"), checked_timestamp,
                                 lambda reason: self.source.warn(reason, line),
                                 _event_named(record), name="ts")  # fmt: skip
        kind = record.get("type")
        if stamp is not None:
            # The run's own span: its first line is printed as it starts (before the model's
            # first answer, which a slow or retried request may hold back for seconds), and
            # run_result or run_aborted when it ends (_run).
            self.lead.transcript.metadata.setdefault("started_at", stamp)
        if kind == "agent_event":
            event = record.get("event")
            event = event if isinstance(event, Mapping) else {}
            sub = event.get("type")
            kind = f"agent_event/{sub}" if isinstance(sub, str) else "agent_event"
            if kind in _IGNORED:
                self.source.ignored(kind)
                self._end_turn(self._agent())
                return
            if not self._agent_event(kind, event, stamp, line):
                return
        elif kind == "hook_event":
            self._hook(record, line)
        elif kind in ("run_start", "run_result", "run_aborted"):
            self._run(kind, record)
            if kind != "run_start" and stamp is not None:
                self.lead.transcript.metadata["ended_at"] = stamp
        elif isinstance(kind, str) and kind in _IGNORED:
            self.source.ignored(kind)
            return
        else:
            name = kind if isinstance(kind, str) and kind else "(object)"
            self.source.warn(f"unknown --json event {name!r} skipped", line, record_type=name)
            return
        self.source.mapped(kind)

    # --- agents ---

    def _agent(self) -> _Agent:
        return self.agents.get(self.current, self.lead)

    def _hook(self, record: Mapping[str, Any], line: int) -> None:
        """The agent the next events belong to; a sub-agent starts under its parent's call."""
        agent_id = record.get("agentId")
        agent_id = agent_id if isinstance(agent_id, str) and agent_id else None
        parent = record.get("parentAgentId")
        parent = parent if isinstance(parent, str) and parent else None
        if agent_id is None:
            return
        if self.lead_id is None and parent is None:
            self.lead_id = agent_id
            self.agents[agent_id] = self.lead
        if agent_id not in self.agents:
            if parent is None:  # a second lead: another run appended to the file
                self.agents[agent_id] = self.lead
            else:
                self._start_subagent(agent_id, parent, record, line)
        self.current = agent_id

    def _start_subagent(
        self, agent_id: str, parent: str, record: Mapping[str, Any], line: int
    ) -> None:
        owner = self.agents.get(parent, self.lead)
        nested = Transcript(metadata={"source_format": NAME, "agent": "cline"})
        task_id = record.get("taskId")
        if isinstance(task_id, str):
            nested.metadata["task_id"] = task_id
        self.agents[agent_id] = _Agent(nested, parent=parent)
        # The call that started it is the parent's spawn_agent still running, without one yet.
        call = next(
            (
                c for c in owner.calls.values()
                if c.name == "spawn_agent" and c.status == "pending" and c.subagent is None
            ),
            None,
        )  # fmt: skip
        if call is None:
            self.source.warn(
                f"sub-agent {agent_id} started by no running spawn_agent call: its steps are "
                "not shown", line, record_type="hook_event",
            )  # fmt: skip
            return
        agent = subagent_of(call, {})
        agent.transcript, agent.agent_id, agent.steps_missing = nested, agent_id, False
        owner.transcript.update(call, subagent=agent)

    # --- agent events ---

    def _agent_event(
        self, kind: str, event: Mapping[str, Any], stamp: str | None, line: int
    ) -> bool:
        agent = self._agent()
        content = event.get("contentType")
        if kind == "agent_event/content_start":
            if content == "tool":
                self._tool_start(agent, event, stamp)
            elif content in ("text", "reasoning"):
                piece = event.get("text" if content == "text" else "reasoning")
                pieces, at = agent.deltas.get(content, ([], stamp))
                if isinstance(piece, str):
                    pieces.append(piece)
                agent.deltas[content] = (pieces, at)
        elif kind == "agent_event/content_end":
            if content == "tool":
                return self._tool_end(agent, event, stamp, line)
            if content in ("text", "reasoning"):
                whole = event.get("text" if content == "text" else "reasoning")
                self._close(agent, content, whole if isinstance(whole, str) else None, stamp)
            elif content == "media":
                made = media_of(event)
                if isinstance(made, ImageData):
                    agent.add(AssistantText(text="", images=[made], timestamp=stamp))
                else:
                    agent.add(AssistantText(text=made, timestamp=stamp))
        elif kind == "agent_event/content_update":
            call_id = event.get("toolCallId")
            update = event.get("update")
            chunk = update.get("chunk") if isinstance(update, Mapping) else None
            if isinstance(call_id, str) and isinstance(chunk, str) and chunk:
                agent.streamed.setdefault(call_id, []).append(chunk)
        elif kind == "agent_event/usage":
            self._usage(agent, event)
        elif kind == "agent_event/notice":
            message = event.get("message")
            reason = event.get("reason") or event.get("noticeType")
            level: Literal["info", "warning"] = (
                "warning" if event.get("noticeType") == "stop" else "info"
            )
            agent.add(SystemNotice(
                text=message if isinstance(message, str) else stringify(message), level=level,
                subtype=reason if isinstance(reason, str) else None, timestamp=stamp,
            ))  # fmt: skip
        elif kind == "agent_event/error":
            self._error(agent, event, stamp)
        elif kind == "agent_event/done":
            self._done(agent, event)
        else:
            self.source.warn(f"unknown agent event {kind!r} skipped", line, record_type=kind)
            return False
        return True

    def _close(self, agent: _Agent, content: str, whole: str | None, stamp: str | None) -> None:
        """The text or reasoning being streamed ends: the end's whole text, else the deltas."""
        pieces, at = agent.deltas.pop(content, ([], stamp))
        text = whole if whole is not None else "".join(pieces)
        if not text:
            return
        if content == "text":
            agent.add(AssistantText(text=text, timestamp=at or stamp))
        else:
            agent.add(Thinking(text=text, timestamp=at or stamp))

    def _tool_start(self, agent: _Agent, event: Mapping[str, Any], stamp: str | None) -> None:
        call_id = event.get("toolCallId")
        call_id = call_id if isinstance(call_id, str) else ""
        name = event.get("toolName")
        name = name if isinstance(name, str) and name else "unknown_tool"
        args = event.get("input")
        if agent.batch is None:
            agent.batch = call_id or None
        call = ToolCall(
            call_id=call_id, name=name, args=args, description=describe(name, args, None),
            batch_id=agent.batch, timestamp=stamp, started_at=stamp,
        )  # fmt: skip
        agent.add(call)
        if call_id:
            agent.calls[call_id] = call

    def _tool_end(
        self, agent: _Agent, event: Mapping[str, Any], stamp: str | None, line: int
    ) -> bool:
        call_id = event.get("toolCallId")
        call = agent.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.source.warn(
                f"tool result for unknown tool call id {call_id!r} skipped", line,
                record_type="agent_event/content_end",
            )  # fmt: skip
            return False
        error = event.get("error")
        flagged = isinstance(error, str) and bool(error)
        output = event.get("output")
        status, result, feedback, returned = outcome_of(
            error if flagged and output is None else output, flagged=flagged
        )
        changes: dict[str, Any] = {"status": status, "result": result, "ended_at": stamp}
        duration = event.get("durationMs")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            changes["duration_ms"] = float(duration)
        changes.update(agent_answer(call, returned))
        told = changes.get("subagent")
        if told is not None and call.subagent is not None and call.subagent.transcript:
            # Its steps were read from its own events.
            nested = call.subagent.transcript
            told.transcript, told.agent_id = nested, call.subagent.agent_id
            told.tool_count, told.steps_missing = len(nested.tool_calls()), False
        agent.transcript.update(call, **changes)
        agent.streamed.pop(call.call_id, None)
        if feedback:  # the user's words given with a denial
            agent.add(UserMessage(text=feedback, timestamp=stamp))
        return True

    def _usage(self, agent: _Agent, event: Mapping[str, Any]) -> None:
        """One model call's counts, kept until the call's entries are all there."""
        add_into(agent.counts, counts_of(_counted(event)))
        cost = _cost(event.get("cost"))
        if cost is not None:
            agent.costs.append(cost)
            agent.cost = (agent.cost or 0.0) + cost

    def _end_turn(self, agent: _Agent) -> None:
        """The model call under way ends (the next starts, or the agent is done): its usage
        and cost go on its entries."""
        for content in ("reasoning", "text"):
            if content in agent.deltas:
                self._close(agent, content, None, None)
        if agent.counts:
            counts = agent.counts
            usage = Usage(
                input_tokens=counts.get("input_tokens"), output_tokens=counts.get("output_tokens"),
                cache_read_tokens=counts.get("cache_read_tokens"),
                cache_write_tokens=counts.get("cache_write_tokens"),
            )  # fmt: skip
            attach_usage(agent.turn, usage, agent.transcript)
        carrier = usage_carrier(agent.turn)
        if agent.cost is not None and carrier is not None:
            carrier.meta["cost_usd"] = round(agent.cost, 9)
        agent.turn, agent.batch, agent.counts, agent.cost = [], None, {}, None

    def _error(self, agent: _Agent, event: Mapping[str, Any], stamp: str | None) -> None:
        error = event.get("error")
        message = error.get("message") if isinstance(error, Mapping) else error
        text = message if isinstance(message, str) and message else stringify(error)
        if event.get("recoverable") is True:
            agent.add(SystemNotice(text=text, level="warning", subtype="error", timestamp=stamp))
        else:
            agent.add(AssistantError(message=text, timestamp=stamp))

    def _done(self, agent: _Agent, event: Mapping[str, Any]) -> None:
        """An agent's end: its reason and its own total usage."""
        self._end_turn(agent)
        agent.done = True
        meta = agent.transcript.metadata
        reason = event.get("reason")
        if isinstance(reason, str):
            _set_outcome(meta, reason)
        _totals(meta, event.get("usage"))

    # --- the run ---

    def _run(self, kind: str, record: Mapping[str, Any]) -> None:
        meta = self.lead.transcript.metadata
        if kind == "run_start":
            for key, name in (("modelId", "model"), ("providerId", "model_provider"),
                              ("sessionId", "session_id")):  # fmt: skip
                if isinstance(record.get(key), str) and record[key]:
                    meta[name] = record[key]
            return
        # The run ended, whether or not its agent said done: a run that fails on an error
        # (an API error, say) prints the error and its run_result, and no done event.
        self.ended = True
        if kind == "run_aborted":
            meta["outcome"] = "cancelled"
            return
        reason = record.get("finishReason")
        if isinstance(reason, str):
            _set_outcome(meta, reason)
        _totals(meta, record.get("usage"))
        duration = record.get("durationMs")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            meta["duration_ms"] = duration
        model = record.get("model")
        if isinstance(model, Mapping):
            for key, name in (("id", "model"), ("provider", "model_provider")):
                if isinstance(model.get(key), str) and model[key]:
                    meta[name] = model[key]

    def finish(self) -> Transcript:
        open_calls = 0
        for agent in {id(a): a for a in self.agents.values()}.values():
            self._end_turn(agent)
            for call in agent.calls.values():
                if call.status != "pending":
                    continue
                open_calls += 1
                streamed = "".join(agent.streamed.get(call.call_id, []))
                agent.transcript.update(
                    call, status="unknown", result=make_result(streamed) if streamed else None
                )
            if agent.costs and "cost_usd" not in agent.transcript.metadata:
                agent.transcript.metadata["cost_usd"] = round(sum(agent.costs), 9)
            if "cost_usd" in agent.transcript.metadata:
                # An agent's totalCost (its done's, the run_result's for the lead; the CLI's
                # aggregateUsage says the same) is its own model calls': its sub-agents' are
                # on their own done events, added by turnfold.cost (U-2).
                agent.transcript.metadata["cost_includes_subagents"] = False
        if not (self.lead.done or self.ended):
            calls = f"; {open_calls} call(s) without a result" if open_calls else ""
            self.source.warn(f"the stream ends before the run did (no done event){calls}")
        model = self.lead.transcript.metadata.get("model")
        if isinstance(model, str):
            for entry in self.lead.transcript.entries:
                if isinstance(entry, AssistantText) and entry.model is None:
                    entry.model = model
        return self.lead.transcript


def _counted(usage: Mapping[str, Any]) -> Usage | None:
    """Counts as the SDK's ``AgentUsage`` holds them: ``inputTokens`` with the cached tokens in
    it; a cache count left out (the adapter drops zeros) is zero when the input is counted."""
    given = usage.get("inputTokens")
    zero = 0 if given is not None else None
    return counted_usage(
        given, usage.get("outputTokens"),
        usage.get("cacheReadTokens", zero), usage.get("cacheWriteTokens", zero),
    )  # fmt: skip


def _cost(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok and 0 <= value < float("inf") else None


def _set_outcome(meta: dict[str, Any], reason: str) -> None:
    outcome = _OUTCOMES.get(reason, "error")
    if outcome is None:
        meta.pop("outcome", None)
    else:
        meta["outcome"] = outcome
    meta["finish_reason"] = reason


def _totals(meta: dict[str, Any], usage: Any) -> None:
    """An agent's or the run's total usage and cost (a ``done`` event's, ``run_result``'s)."""
    if not isinstance(usage, Mapping):
        return
    counts = counts_of(_counted(usage))
    if counts:
        meta["usage"] = counts
    cost = _cost(usage.get("totalCost"))
    if cost is not None:
        meta["cost_usd"] = cost


def read(source: Source) -> Transcript:
    """Every event in order, each given to the agent of the last hook event."""
    reader = _Reader(source)
    read_events(source, reader.event, "a --json event")
    return reader.finish()
