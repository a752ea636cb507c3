"""AutoGen AgentChat's run (spec A-1, A-2, issue 22): a ``TaskResult``, its ``messages``, and
their saved form, ``[m.dump() for m in result.messages]`` (or ``result.model_dump()``), from
a file or from JSON text.

Input shapes: a document ``{"messages": [...], "stop_reason": ...}`` (a ``TaskResult``), or a
list (a JSON array, or JSON lines) of message dumps: ``{"type": "TextMessage", "source",
"created_at", "models_usage", "id", "metadata", "content", ...}``. ``load`` turns the objects
into those records with each message's own ``dump()`` (:func:`plain`): a ``TaskResult``, a
list of messages, one message, an agent's ``Response``. ``Follower`` reads ``run_stream``'s
messages as they come, then its final ``TaskResult``.

Mapping (each message's ``source`` is the agent that wrote it, kept in ``meta["agent"]``;
``created_at`` is every entry's ``timestamp``; ``models_usage`` (``prompt_tokens``,
``completion_tokens``) is the :class:`Usage` of the model response that made the message):

- ``TextMessage`` from ``user`` (a task) → :class:`UserMessage`; from an agent →
  :class:`AssistantText`; from a user proxy after its ``UserInputRequestedEvent`` → the
  user's :class:`UserMessage` (``meta["agent"]`` names the proxy);
  ``MultiModalMessage`` → the same, its images on the user's message or the agent's text;
  ``StructuredMessage[...]`` →
  :class:`AssistantText` of its ``format_string`` or its JSON, the content in
  ``meta["structured"]``;
- ``ThoughtEvent`` → :class:`Thinking`;
- ``ToolCallRequestEvent`` → one :class:`ToolCall` per ``FunctionCall`` (``id`` kept
  verbatim, ``arguments`` parsed), the event's ``id`` as their batch, the response's usage in
  the first call's ``usage``; ``ToolCallExecutionEvent`` settles each call by its
  ``FunctionExecutionResult.call_id``: ``is_error`` true → ``error``, false → ``success``
  (AutoGen's own flag), absent → ``unknown``; its ``created_at`` is the call's ``ended_at``
  (the time the whole batch ended: parallel calls share it);
- an agent used as a tool (``AgentTool``, ``TeamTool``): AutoGen streams the inner run's
  messages into the caller's, between the call and its result, starting with a ``user``
  ``TextMessage`` holding the call's ``task``; they become the call's :class:`SubAgent`
  transcript (nested runs nest again), so no sub-agent's steps are missing; the task is the
  call's description;
- ``ToolCallSummaryMessage`` (the agent's reply when its tool loop ends without another model
  call: the results joined by AutoGen, no text the model wrote) → a :class:`SystemNotice`
  (subtype ``tool_call_summary``, ``meta["call_ids"]``), never a second answer; a call it
  lists that no request recorded becomes a :class:`ToolCall` settled by its result;
- ``HandoffMessage`` (a Swarm's handoff) → the ``transfer_to_<target>`` call gets a
  :class:`SubAgent` naming the target, and the target's messages nest in its transcript until
  control leaves it: a handoff onward nests again inside it, a handoff back to an agent whose
  call holds it ends the levels below that agent, whose messages go on at its own level (the
  call back nests nothing). When the turn ends (the run's end, the user's next message) the
  last text of the agent holding control, the run's answer, moves to the top, where the user
  reads it, and each level closes with its ``tool_count``, ``subagent_count`` and
  ``output_tokens`` (a level that held only the answer keeps no transcript). No notice: the
  call line says it. A handoff to ``user`` (or one whose call is not found) is a
  :class:`SystemNotice` (subtype ``handoff``) naming the target, as nothing nests. Its
  ``context`` (the calls handed over) repeats calls already shown;
- ``SelectSpeakerEvent`` → a notice (subtype ``speaker``) when the speaker changes mid-run;
  a change of agent nothing announced (a round-robin team) gets one too (subtype ``agent``);
  none right after a user's message, whose turn is whoever answers it;
  ``SelectorEvent`` → a notice (subtype ``selector``);
- ``StopMessage`` → a notice (subtype ``stop``) and ``metadata["stop_message"]``;
  ``TaskResult.stop_reason`` → ``metadata["stop_reason"]``; the last agent that spoke →
  ``metadata["agent"]``;
- ``MemoryQueryEvent`` (the agent's memory queried before its model call) → a
  ``memory_query`` :class:`ToolCall` marked ``memory="read"``, the event's ``id`` as its call
  id, the memories as its result, ``success`` (AutoGen adds the event only for a query that
  found memories);
- ``CodeGenerationEvent`` (``CodeExecutorAgent``) → :class:`AssistantText`, and for its code
  blocks an ``execute_code`` :class:`ToolCall` (the event's ``id`` as its call id);
  ``CodeExecutionEvent`` settles it: ``exit_code`` 0 → ``success``, else ``error``;
- ``ModelClientStreamingChunkEvent`` (``model_client_stream=True``) → the text so far of the
  message its ``full_message_id`` names; that message replaces it when it arrives (a
  ``TaskResult`` holds no chunks). Chunks that turn out to be the model's thought (a
  ``ThoughtEvent`` of their id follows) leave no empty entry (:func:`split_thought`): a
  ``<think>`` section (how AutoGen's OpenAI client streams ``reasoning_content``, and an R1
  model writes it) streams as a :class:`Thinking` from its first chunk, which the
  ``ThoughtEvent`` completes, the text after it kept for the agent's next message (AutoGen
  gives that message a new id); chunks that said nothing of it (text beside tool calls, an
  Anthropic model's thinking deltas) stay the progress note they streamed as, holding the
  thought's text (``meta["streamed_as"] = "thinking"``), not shown twice.

AutoGen records no model name (``AssistantText.model`` stays None), no per-call start time
(``started_at`` is the request event's time) and no error flag for a ``TaskResult`` as a
whole (L-3).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MessageBuilder,
    NameSet,
    as_int,
    checked_timestamp,
    describe_args,
    parse_arguments,
    stringify,
    text_result,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source, type_of_record, warning_count
from turnfold.formats.wording import notice
from turnfold.formats.wrappers import sample
from turnfold.model import (
    AssistantText,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)

NAME = "autogen"

#: ``autogen_agentchat.messages``' concrete types (``MessageFactory`` registers these), by the
#: ``type`` their dumps carry; a ``StructuredMessage[Model]`` is read as ``StructuredMessage``.
CHAT_MESSAGES = NameSet(
    {
        "TextMessage",
        "MultiModalMessage",
        "StopMessage",
        "ToolCallSummaryMessage",
        "HandoffMessage",
        "StructuredMessage",
    }
)
AGENT_EVENTS = NameSet(
    {
        "ToolCallRequestEvent",
        "ToolCallExecutionEvent",
        "MemoryQueryEvent",
        "UserInputRequestedEvent",
        "ModelClientStreamingChunkEvent",
        "ThoughtEvent",
        "SelectSpeakerEvent",
        "SelectorEvent",
        "CodeGenerationEvent",
        "CodeExecutionEvent",
    }
)
MESSAGE_TYPES = NameSet(CHAT_MESSAGES | AGENT_EVENTS)
#: The ``source`` of a task given as a string (``BaseChatAgent.run`` and the teams write it).
USER = "user"
#: The name turnfold gives the execution of a ``CodeGenerationEvent``'s code blocks.
CODE_TOOL = "execute_code"
#: The name turnfold gives the memory query a ``MemoryQueryEvent`` records.
MEMORY_TOOL = "memory_query"
#: What :func:`plain` leaves for an AutoGen object that is no run (an agent, a team...).
_OBJECT_KEY = "$autogen_object"
_STRUCTURED = "StructuredMessage"


# --- detection ---------------------------------------------------------------------------


def message_type(value: Any) -> str:
    """A message dump's type for accounting: ``StructuredMessage[Model]`` as
    ``StructuredMessage``, a record of no AgentChat type as :func:`type_of_record` says."""
    kind = value.get("type") if isinstance(value, Mapping) else None
    if isinstance(kind, str) and kind.startswith(_STRUCTURED + "["):
        return _STRUCTURED
    return kind if isinstance(kind, str) and kind else type_of_record(value)


def is_message(value: Any) -> bool:
    """A message dump: an AgentChat type and the ``source`` every message has."""
    return (
        isinstance(value, Mapping)
        and message_type(value) in MESSAGE_TYPES
        and isinstance(value.get("source"), str)
        and ("models_usage" in value or "created_at" in value)
    )


def _classify(value: Any) -> int:
    return DISTINCTIVE if is_message(value) else NOT_MINE


def detect(source: Source) -> Evidence:
    """A ``TaskResult`` document whose ``messages`` are message dumps, or a list of them.

    The types (``ToolCallRequestEvent``...) with a ``source`` and ``models_usage`` are marks
    only AgentChat writes."""
    document = source.document if source.is_document else None
    if isinstance(document, Mapping) and not is_message(document):
        messages = document.get("messages")
        if not isinstance(messages, list):
            return Evidence.none("no messages")
        items = sample(messages)
        marks = sum(1 for m in items if is_message(m))
        if not marks:
            return Evidence.none("messages holds no AgentChat messages")
        return Evidence(share=1.0, marks=marks + 1)  # +1: the TaskResult document itself
    return Evidence.of(source.head_values(), _classify, "no AgentChat message (type, source)")


# --- the builder -------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else stringify(value) if value is not None else ""


def _task_of(call: ToolCall) -> str | None:
    """The task of an ``AgentTool``/``TeamTool`` call (``TaskRunnerToolArgs``: ``task`` alone)."""
    args = call.args
    if isinstance(args, Mapping) and len(args) == 1 and isinstance(args.get("task"), str):
        return str(args["task"])
    return None


_THINK, _THOUGHT_END = "<think>", "</think>"


def split_thought(streamed: str) -> tuple[str, str]:
    """A message's streamed text as (thinking, text): a ``<think>`` section it opens with is
    thinking (AutoGen's OpenAI client wraps a model's ``reasoning_content`` chunks so, and an
    R1 model writes it in its content), the text after its end the message's own. Text that
    may yet open one (``"<thi"``) is neither until it does.

    >>> split_thought("<think>Sum is 3.</think>1+2=3."), split_thought("1+2=3.")
    (('Sum is 3.', '1+2=3.'), ('', '1+2=3.'))
    """
    head = streamed.lstrip()
    if not head.startswith(_THINK):
        return ("", "") if head and _THINK.startswith(head) else ("", streamed)
    thought, ended, rest = head[len(_THINK) :].partition(_THOUGHT_END)
    return thought, rest.lstrip() if ended else ""


@dataclass
class _Stream:
    """What one message's chunks grew: their text so far, and the entries showing it."""

    raw: str = ""
    thinking: Thinking | None = None
    text: AssistantText | None = None


class AutogenBuilder(MessageBuilder):
    """Builds a transcript from AgentChat message dumps, fed one at a time, in order.

    The same builder reads a saved run (``live=False``) and follows ``run_stream``
    (``live=True``: a call without its result is still executing). An agent used as a tool
    gets a child builder for its call, and so does the agent a Swarm hands off to (its
    ``handoff`` builder, under the handoff call, until control leaves it); :meth:`feed`
    routes each message to the builder of the run it belongs to.
    """

    def __init__(
        self,
        transcript: Transcript,
        source_name: str = "<messages>",
        *,
        live: bool = False,
        parent: AutogenBuilder | None = None,
        host: ToolCall | None = None,
        handoff: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, live=live)
        self.parent = parent
        self.root: AutogenBuilder = parent.root if parent is not None else self
        #: The caller's call this run answers (a child builder's), else None.
        self.host = host
        #: Messages read into this builder and its children (for "no messages at all").
        self.recognized = 0
        #: The agent that spoke last at this level, and every agent that spoke here.
        self.agent: str | None = None
        self.agents: list[str] = []
        #: Agents named by a handoff or a speaker selection: their turn needs no notice.
        self._expected: set[str] = set()
        self._open: dict[str, ToolCall] = {}
        self._children: dict[str, AutogenBuilder] = {}
        #: The sources whose messages were routed to this child run.
        self.sources: set[str] = set()
        self._streams: dict[str, _Stream] = {}
        self._awaiting: set[str] = set()
        self._code: dict[str, ToolCall] = {}
        self._output_tokens: int | None = None
        #: Whether this run is an agent's part after a handoff (its host is the handoff call).
        self.is_handoff = handoff
        #: The agent this run handed off to, holding control now (its builder), if any.
        self._handoff: AutogenBuilder | None = None
        #: Handoff calls back to an agent above: no agent spawned, so not counted as one.
        self._returns: set[str] = set()

    # --- writing, so that a live view hears of every change ---------------------------------

    def warn(self, reason: str, line: int | None) -> None:
        """Warnings of a nested run are the whole load's (they name the source's line)."""
        if self.root is self:
            super().warn(reason, line)
        else:
            self.root.warn(reason, line)

    def _append(self, entry: Entry) -> Entry:
        self.transcript.append(entry)
        self._changed()
        return entry

    def update(self, entry: Entry, **changes: Any) -> None:
        """In this run's transcript, its caller told (:meth:`_changed`)."""
        self.transcript.update(entry, **changes)
        self._changed()

    def _changed(self) -> None:
        """Tell the caller's transcript that this child run grew (live only: a widget
        observes the top transcript, and a static load sets the counts once at the end)."""
        if not self.live or self.parent is None or self.host is None:
            return
        agent = self.host.subagent
        if agent is not None:
            self.parent.update(
                self.host, subagent=replace(agent, tool_count=len(self.transcript.tool_calls()))
            )

    # --- routing -----------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        """One message dump, in the run it belongs to."""
        target = self._route(message)
        target.root.recognized += 1
        target._handle(message, line)

    def _route(self, message: Mapping[str, Any]) -> AutogenBuilder:
        kind = message_type(message)
        source = message.get("source")
        source = source if isinstance(source, str) else ""
        results = message.get("content")
        if kind == "ToolCallExecutionEvent" and isinstance(results, list) and any(
            isinstance(r, Mapping) and isinstance(r.get("call_id"), str)
            and r["call_id"] in self._open for r in results
        ):  # fmt: skip
            return self
        if kind == "TextMessage" and source == USER:
            owner = self._task_owner(message.get("content"))
            if owner is not None:
                builder, call = owner
                return builder._start_child(call)
        if source == USER and self._handoff is not None and not self._busy():
            self.end_turn()  # the person speaks again: the agents' turn has ended
            return self
        child = self._child_for(source)
        if child is None:
            return self._handoff._route(message) if self._handoff is not None else self
        if source != USER:
            child.sources.add(source)
        return child._route(message)

    def _task_owner(self, task: Any) -> tuple[AutogenBuilder, ToolCall] | None:
        """The run (this one or a nested one) with an open agent-tool call for ``task`` whose
        inner run has not begun: the ``user`` message with that text begins it."""
        if not isinstance(task, str):
            return None
        for child in [*self._children.values(), *filter(None, [self._handoff])]:
            found = child._task_owner(task)
            if found is not None:
                return found
        for call in self._open.values():
            if call.call_id not in self._children and _task_of(call) == task:
                return self, call
        return None

    def _busy(self) -> bool:
        """Whether an agent used as a tool runs here or in an agent handed off to."""
        return bool(self._children) or (self._handoff is not None and self._handoff._busy())

    def _child_for(self, source: str) -> AutogenBuilder | None:
        if not self._children:
            return None
        children = list(self._children.values())
        for child in children:
            if source in child.sources:
                return child
        for child in children:
            if child.host is not None and child.host.name == source:  # AgentTool's default name
                return child
        only = children[0]
        if len(children) == 1 and only.host is not None and source != only.host.meta.get("agent"):
            return only
        return None

    def _start_child(self, call: ToolCall) -> AutogenBuilder:
        child = AutogenBuilder(
            Transcript(), self.source_name, live=self.live, parent=self, host=call
        )
        self._children[call.call_id] = child
        task = _task_of(call) or ""
        if call.description is None and task.strip():
            line = task.strip().splitlines()[0]
            self.update(call, description=line if len(line) <= 120 else line[:119] + "…")
        self.update(
            call,
            subagent=SubAgent(name=call.name, task=_task_of(call), transcript=child.transcript),
        )
        return child

    def _child_summary(self, child: AutogenBuilder, call: ToolCall) -> SubAgent:
        child.finish()
        name = child.agents[0] if len(child.agents) == 1 else call.name
        return SubAgent(
            name=name,
            task=_task_of(call),
            transcript=child.transcript,
            tool_count=len(child.transcript.tool_calls()),
            subagent_count=child._spawned(),
            output_tokens=child._output_tokens,
        )

    def _spawned(self) -> int:
        """The agents this run called or handed off to (a handoff back spawns none)."""
        calls = self.transcript.tool_calls()
        return sum(1 for c in calls if c.subagent is not None and c.call_id not in self._returns)

    def finish(self) -> None:
        """The run ended: the turn ends (:meth:`end_turn`), nested runs end too, and calls
        without a result have no recorded outcome (``unknown``), live or not."""
        last = self._deepest().agent or self.agent
        self.end_turn()
        self._finish_level()
        if self.root is self and last is not None:
            self.transcript.metadata["agent"] = last

    def _finish_level(self) -> None:
        for call_id, child in list(self._children.items()):
            host = self._calls[call_id]
            self.update(host, subagent=self._child_summary(child, host))
        self._children.clear()
        self.settle_open([*self._open.values(), *self._code.values()])
        self._open.clear()
        self._code.clear()

    # --- handoffs (a Swarm's) ------------------------------------------------------------------

    def _deepest(self) -> AutogenBuilder:
        """The run of the agent holding control: the last one handed off to."""
        level = self
        while level._handoff is not None:
            level = level._handoff
        return level

    def _ancestor(self, name: str) -> AutogenBuilder | None:
        """The run above this one, along the handoffs that led here, whose agent is ``name``."""
        level = self
        while level.is_handoff and level.parent is not None:
            level = level.parent
            if level.agent == name:
                return level
        return None

    def _hand_off(self, call: ToolCall, target: str, source: str | None) -> None:
        """``call`` handed control to ``target``: its steps nest in the call's sub-agent, or
        go on at its own level when it handed off to this run before (a handoff back)."""
        task = f"handoff from {source}"
        ancestor = self._ancestor(target)
        if ancestor is not None:
            self._returns.add(call.call_id)
            self.update(call, subagent=SubAgent(name=target, task=task))
            ancestor._close_handoff()
            return
        child = AutogenBuilder(
            Transcript(), self.source_name, live=self.live, parent=self, host=call, handoff=True
        )
        self._handoff = child
        self.update(call, subagent=SubAgent(name=target, task=task, transcript=child.transcript))

    def _close_handoff(self) -> None:
        """Control came back here: the runs handed off to end, each call's sub-agent gets
        its counts."""
        child = self._handoff
        if child is None:
            return
        child._close_handoff()
        child._finish_level()
        self._handoff = None
        host = child.host
        if host is None or host.subagent is None:
            return  # never: a handoff's run is made with its call's sub-agent
        calls = child.transcript.tool_calls()
        summary = replace(
            host.subagent,
            transcript=child.transcript if child.transcript.entries else None,
            tool_count=len(calls),
            subagent_count=child._spawned(),
            output_tokens=child._output_tokens,
        )
        self.update(host, subagent=summary)

    def end_turn(self) -> None:
        """The turn ended (the run's end, or the person speaks again): the last text of the
        agent holding control, the run's answer, moves out of the handoffs' folds to this
        level, where the user reads it (rule A-1.2), and the runs handed off to end."""
        if self._handoff is None:
            return
        deepest = self._deepest()
        entries = deepest.transcript.entries
        last = entries[-1] if entries else None
        host, parent = deepest.host, deepest.parent
        answer = None
        if isinstance(last, AssistantText) and host and host.subagent and parent is not None:
            answer = last
            # Transcripts only grow, so the agent's transcript is made again without it.
            deepest.transcript = Transcript(entries[:-1])
            parent.update(host, subagent=replace(host.subagent, transcript=deepest.transcript))
        self._close_handoff()
        self.agent = deepest.agent or self.agent  # its handoff call told the change
        if answer is not None:
            answer.id = ""  # a fresh id of this transcript's
            self._append(answer)

    # --- one message ---------------------------------------------------------------------------

    def _handle(self, message: Mapping[str, Any], line: int) -> None:
        kind = message_type(message)
        source = message.get("source")
        source = source if isinstance(source, str) else None
        named = message.get("id")
        what = f"message {named[:80]}" if isinstance(named, str) and named else f"a {kind}"
        timestamp = warned_timestamp(message.get("created_at"), checked_timestamp,
                                     lambda reason: self.warn(reason, line), what,
                                     name="created_at")  # fmt: skip
        usage = usage_from(
            message.get("models_usage"),
            input_tokens="prompt_tokens",
            output_tokens="completion_tokens",
        )
        if usage is not None and usage.output_tokens is not None:
            self._output_tokens = (self._output_tokens or 0) + usage.output_tokens
        meta: dict[str, Any] = {"agent": source} if source and source != USER else {}
        extra = message.get("metadata")
        if isinstance(extra, Mapping) and extra:
            meta["metadata"] = dict(extra)
        handler = getattr(self, "_on_" + kind, None)
        if handler is None:  # read() and Follower pass known types only
            self.warn(f"message of type {kind!r} skipped", line)
            return
        handler(message, source, timestamp, usage, meta, line)

    def _speaker(self, source: str | None) -> None:
        """``source`` speaks; a change of agent that no handoff or selection announced gets
        a notice, so each agent's part reads as its own turn."""
        if not source or source == USER or source == self.agent:
            return
        if self.agent is not None and source not in self._expected and not self._after_user():
            self._append(notice("reader.agent", {"name": source}, subtype="agent"))
        self._expected.clear()
        self.agent = source
        if source not in self.agents:
            self.agents.append(source)

    def _after_user(self) -> bool:
        """Whether the last entry is the user's: its turn is whoever answers it, no notice."""
        entries = self.transcript.entries
        return bool(entries) and isinstance(entries[-1], UserMessage)

    def _take_stream(self, message: Mapping[str, Any], source: str | None) -> _Stream | None:
        """What the message's streamed chunks grew, if anything: by the message's ``id`` (the
        chunks' ``full_message_id``), else chunks of the same agent that named none (or whose
        text was left for its next message)."""
        own = message.get("id")
        if isinstance(own, str) and own in self._streams:
            return self._streams.pop(own)
        return self._streams.pop(f"source:{source}", None)

    def _answer(
        self,
        message: Mapping[str, Any],
        text: str,
        timestamp: str | None,
        usage: Usage | None,
        meta: dict[str, Any],
        images: list[ImageData] | None = None,
    ) -> None:
        own = message.get("id")
        if isinstance(own, str):
            meta = {**meta, "message_id": own}
        shown = images or []
        stream = self._take_stream(message, message.get("source"))
        if stream is not None and stream.thinking is not None and stream.thinking.streaming:
            self.update(stream.thinking, streaming=False)  # no ThoughtEvent closed it
        streamed = stream.text if stream is not None else None
        if streamed is not None:
            self.update(streamed, text=text, usage=usage, timestamp=timestamp, meta=meta,
                        images=shown)  # fmt: skip
        else:
            self._append(AssistantText(text=text, usage=usage, timestamp=timestamp, meta=meta,
                                       images=shown))  # fmt: skip

    def _user(self, text: str, timestamp: str | None, meta: dict[str, Any], **extra: Any) -> None:
        self._append(UserMessage(text=text, timestamp=timestamp, meta=meta, **extra))

    def _is_user(self, source: str | None) -> bool:
        if source == USER:
            return True
        if source is not None and source in self._awaiting:
            self._awaiting.discard(source)
            return True
        return False

    def _on_TextMessage(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        text = _text(m.get("content"))
        if self._is_user(source):
            self._user(text, ts, meta)
            return
        self._speaker(source)
        self._answer(m, text, ts, usage, meta)

    def _on_MultiModalMessage(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        content = m.get("content")
        texts: list[str] = []
        images: list[ImageData] = []
        for part in content if isinstance(content, list) else [content]:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("data"), str):
                images.append(
                    ImageData(media_type="image/png", data=part["data"])
                )  # to_base64: PNG
        text = "\n".join(texts)
        if self._is_user(source):
            self._user(text, ts, meta, images=images)
            return
        self._speaker(source)
        self._answer(m, text, ts, usage, meta, images)

    def _on_StructuredMessage(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        content = m.get("content")
        text = json.dumps(content, ensure_ascii=False) if content is not None else ""
        template = m.get("format_string")
        if isinstance(template, str) and isinstance(content, Mapping):
            # A template that does not fit leaves the JSON (to_text without a format string).
            with contextlib.suppress(KeyError, IndexError, ValueError, AttributeError):
                text = template.format(**content)
        self._speaker(source)
        self._answer(m, text, ts, usage, {**meta, "structured": content})

    def _on_ThoughtEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        self._speaker(source)
        thought = _text(m.get("content"))
        stream = self._take_stream(m, source)
        if stream is not None and stream.thinking is not None:
            # Its <think> section streamed as this thinking: the event completes it.
            self.update(stream.thinking, text=thought, streaming=False, timestamp=ts, meta=meta)
            if stream.text is not None:  # the answer begun after it: its message's to take
                self._streams[f"source:{source}"] = _Stream(text=stream.text)
            return
        if stream is not None and stream.text is not None:
            # The chunks said nothing of a thought: the note the user saw stream holds it
            # (an entry stays where it was shown: none is removed, and none left empty).
            changed = {**stream.text.meta, "streamed_as": "thinking"}
            self.update(stream.text, text=thought, meta=changed)
            return
        self._append(Thinking(text=thought, timestamp=ts, meta=meta))

    def _on_ModelClientStreamingChunkEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        key = m.get("full_message_id")
        key = key if isinstance(key, str) and key else f"source:{source}"
        stream = self._streams.get(key)
        if stream is None:
            self._speaker(source)
            stream = self._streams[key] = _Stream()
        stream.raw += _text(m.get("content"))
        thought, text = split_thought(stream.raw)
        if thought and stream.thinking is None:
            stream.thinking = Thinking(text=thought, streaming=True, timestamp=ts, meta=meta)
            self._append(stream.thinking)
        elif thought and stream.thinking is not None and stream.thinking.text != thought:
            self.update(stream.thinking, text=thought)
        if text and stream.text is None:
            stream.text = AssistantText(text=text, timestamp=ts, meta=meta)
            self._append(stream.text)
        elif text and stream.text is not None and stream.text.text != text:
            self.update(stream.text, text=text)

    def _new_call(
        self,
        call: Any,
        status: ToolStatus,
        batch: str | None,
        ts: str | None,
        meta: dict[str, Any],
        line: int,
    ) -> ToolCall | None:
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            self.warn("a FunctionCall without an id skipped", line)
            return None
        call_id = call["id"]
        if call_id in self._calls:
            self.warn(f"a second call with the id {call_id!r} skipped", line)
            return None
        name = call.get("name")
        name = name if isinstance(name, str) and name else "tool"
        args = parse_arguments(call.get("arguments"))
        entry = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args),
            status=status,
            batch_id=batch,
            timestamp=ts,
            started_at=ts,
            meta=dict(meta),
        )
        self._calls[call_id] = entry
        return entry

    def _on_ToolCallRequestEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        content = m.get("content")
        if not isinstance(content, list):
            self.warn("ToolCallRequestEvent without a list of FunctionCalls", line)
            return
        self._speaker(source)
        batch = m.get("id") if isinstance(m.get("id"), str) else None
        first = True
        for raw in content:
            call = self._new_call(raw, self.open_status, batch, ts, meta, line)
            if call is None:
                continue
            if first and usage is not None:
                call.usage = usage
            first = False
            self._open[call.call_id] = call
            self._append(call)

    def _settle(self, call: ToolCall, result: Any, ts: str | None) -> None:
        flag = result.get("is_error") if isinstance(result, Mapping) else None
        status: ToolStatus = "error" if flag is True else "success" if flag is False else "unknown"
        text = result.get("content") if isinstance(result, Mapping) else None
        changes: dict[str, Any] = {
            "status": status,
            "result": text_result(_text(text) if text is not None else None),
            "ended_at": ts,
        }
        child = self._children.pop(call.call_id, None)
        if child is not None:
            changes["subagent"] = self._child_summary(child, call)
        self._open.pop(call.call_id, None)
        self.update(call, **changes)

    def _on_ToolCallExecutionEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        content = m.get("content")
        if not isinstance(content, list):
            self.warn("ToolCallExecutionEvent without a list of results", line)
            return
        for result in content:
            call_id = result.get("call_id") if isinstance(result, Mapping) else None
            call = self._calls.get(call_id) if isinstance(call_id, str) else None
            if call is None:
                self.warn(f"a result for an unknown call id {call_id!r} skipped", line)
                continue
            self._settle(call, result, ts)

    def _on_ToolCallSummaryMessage(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        self._speaker(source)
        results = m.get("results")
        by_id = {
            r["call_id"]: r
            for r in (results if isinstance(results, list) else [])
            if isinstance(r, Mapping) and isinstance(r.get("call_id"), str)
        }
        calls = m.get("tool_calls")
        ids: list[str] = []
        batch = m.get("id") if isinstance(m.get("id"), str) else None
        for raw in calls if isinstance(calls, list) else []:
            call_id = raw.get("id") if isinstance(raw, Mapping) else None
            if isinstance(call_id, str) and call_id in self._calls:
                ids.append(call_id)
                continue
            call = self._new_call(raw, "unknown", batch, ts, meta, line)
            if call is None:
                continue
            ids.append(call.call_id)
            self._append(call)
            if call.call_id in by_id:
                self._settle(call, by_id[call.call_id], ts)
        notice = SystemNotice(
            text=_text(m.get("content")),
            subtype="tool_call_summary",
            timestamp=ts,
            meta={**meta, "call_ids": ids},
        )
        self._append(notice)

    def _on_HandoffMessage(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        target = m.get("target")
        if not isinstance(target, str) or not target:
            self.warn("HandoffMessage without a target", line)
            return
        self._speaker(source)
        content = _text(m.get("content"))
        tool = f"transfer_to_{target}".lower()  # autogen_agentchat.base.Handoff's default name
        for call in reversed(self._calls.values()):
            if call.meta.get("agent") != source:
                break  # only the handing agent's latest calls
            said = call.result.text if call.result is not None else None
            if call.name == tool or (said == content and call.status == "success"):
                if target != USER and (call.subagent is None or call.subagent.transcript is None):
                    self._hand_off(call, target, source)
                    return  # the call line says it: no notice (rule)
                if call.subagent is None:
                    handoff = SubAgent(name=target, task=f"handoff from {source}")
                    self.update(call, subagent=handoff)
                break
        # No call to nest under, or control goes back to the person: a notice tells it.
        self._append(
            notice(
                "reader.handed_off",
                {"target": target},
                subtype="handoff",
                timestamp=ts,
                meta={**meta, "message": content},
            )
        )
        self._expected = {target}

    def _on_StopMessage(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        self._speaker(source)
        text = _text(m.get("content"))
        self.transcript.metadata["stop_message"] = text
        self._append(SystemNotice(text=text, subtype="stop", timestamp=ts, meta=meta))

    def _on_SelectSpeakerEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        content = m.get("content")
        names = [n for n in (content if isinstance(content, list) else []) if isinstance(n, str)]
        if self.agent is not None and names and names != [self.agent] and not self._after_user():
            said = {"names": ", ".join(names)}
            self._append(notice("reader.next_speaker", said, subtype="speaker", timestamp=ts,
                                meta=meta))  # fmt: skip
        self._expected = set(names)

    def _on_SelectorEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        text = _text(m.get("content"))
        self._append(SystemNotice(text=text, subtype="selector", timestamp=ts, meta=meta))

    def _on_MemoryQueryEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        content = m.get("content")
        items = content if isinstance(content, list) else []
        own = m.get("id")
        if not isinstance(own, str) or own in self._calls:
            self.warn("a MemoryQueryEvent without an id of its own skipped", line)
            return
        self._speaker(source)
        parts = [_text(i.get("content")) if isinstance(i, Mapping) else _text(i) for i in items]
        # The agent adds an event only for a query that found memories: that is its outcome.
        call = ToolCall(
            call_id=own,
            name=MEMORY_TOOL,
            status="success",
            result=text_result("\n".join(parts)),
            timestamp=ts,
            started_at=ts,
            ended_at=ts,
            memory="read",
            meta={**meta, "memories": len(items)},
        )
        self._calls[own] = call
        self._append(call)

    def _on_UserInputRequestedEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        if source:
            self._awaiting.add(source)  # its next message is what the person typed

    def _on_CodeGenerationEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        self._speaker(source)
        self._answer(m, _text(m.get("content")), ts, usage, dict(meta))
        blocks = m.get("code_blocks")
        blocks = [b for b in blocks if isinstance(b, Mapping)] if isinstance(blocks, list) else []
        own = m.get("id")
        if not blocks or not isinstance(own, str):
            return  # a retry's proposal: text alone
        args: Any = (
            dict(blocks[0]) if len(blocks) == 1 else {"code_blocks": [dict(b) for b in blocks]}
        )
        first = _text(blocks[0].get("code")).strip().splitlines()
        call = ToolCall(
            call_id=own,
            name=CODE_TOOL,
            args=args,
            description=first[0][:120] if first else None,
            status=self.open_status,
            timestamp=ts,
            started_at=ts,
            meta={**meta, "retry_attempt": m.get("retry_attempt")},
        )
        self._calls[own] = call
        if source:
            self._code[source] = call
        self._append(call)

    def _on_CodeExecutionEvent(
        self, m: Mapping[str, Any], source: str | None, ts: str | None, usage: Usage | None,
        meta: dict[str, Any], line: int,
    ) -> None:  # fmt: skip
        call = self._code.pop(source, None) if source else None
        if call is None:
            self.warn("a CodeExecutionEvent without its CodeGenerationEvent skipped", line)
            return
        result = m.get("result")
        result = result if isinstance(result, Mapping) else {}
        code = as_int(result.get("exit_code"))
        status: ToolStatus = "unknown" if code is None else "success" if code == 0 else "error"
        output = result.get("output")
        self.update(
            call,
            status=status,
            result=text_result(_text(output) if output is not None else None),
            ended_at=ts,
        )


# --- run objects (spec A-1) --------------------------------------------------------------


def _dump(message: Any) -> Any:
    """A message by its own ``dump()`` (what AutoGen saves), an unknown object by its name."""
    dump = getattr(message, "dump", None)
    if callable(dump):
        try:
            return dict(dump())
        except Exception as exc:  # a custom message whose dump fails: say so, never crash
            return {_OBJECT_KEY: type(message).__name__, "error": str(exc)}
    if isinstance(message, Mapping):
        return dict(message)
    return {_OBJECT_KEY: type(message).__name__}


def _is_task_result(value: Any) -> bool:
    return (
        hasattr(value, "messages")
        and hasattr(value, "stop_reason")
        and not callable(getattr(value, "dump", None))
    )


def _is_response(value: Any) -> bool:
    return hasattr(value, "chat_message") and hasattr(value, "inner_messages")


def plain(value: Any) -> Any:
    """A ``TaskResult``, a list of messages (or of ``TaskResult``\\s), one message or a
    ``Response`` as the records :func:`read` reads: each message's ``dump()``. Any other
    AutoGen object (an agent, a team, a model client's messages) is named, not copied."""
    if _is_task_result(value):
        return {
            "messages": [_dump(m) for m in value.messages],
            "stop_reason": value.stop_reason,
        }
    if _is_response(value):
        inner = list(value.inner_messages or [])
        return {"messages": [_dump(m) for m in [*inner, value.chat_message]]}
    if isinstance(value, (list, tuple)):
        # A TaskResult in a list stays one record, as a saved list keeps it (run_stream's
        # last item, whose messages the stream yielded already; or one of several runs):
        # read() then reads its messages once, as it reads the list saved as JSON.
        return [plain(item) if _is_task_result(item) else _dump(item) for item in value]
    return _dump(value)


# --- reading -----------------------------------------------------------------------------


def read(source: Source) -> Transcript:
    """The messages of ``source`` (a ``TaskResult`` document or a list of message dumps)."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = AutogenBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    first: int | None = None
    if isinstance(document, Mapping) and _OBJECT_KEY in document:
        kind = document[_OBJECT_KEY]
        raise TranscriptFormatError(
            source.name, [NAME], None,
            f"a {kind} is no AutoGen run: pass a TaskResult (agent.run(), team.run()) "
            "or its messages",
        )  # fmt: skip
    if isinstance(document, Mapping) and not is_message(document):
        messages = document.get("messages")
        for key, value in document.items():
            _top_level(source, transcript, key, value)
        for line, message in enumerate(messages if isinstance(messages, list) else [], 1):
            first = line if first is None else first
            _feed(source, builder, message, line)
    else:
        read_before = 0  # messages read when the last TaskResult of the list came
        for line, message in source.records():
            first = line if first is None else first
            if _is_saved_result(message):
                repeats = builder.recognized > read_before
                _stream_result(source, builder, message, line, repeats=repeats)
                read_before = builder.recognized
                continue
            _feed(source, builder, message, line)
    builder.finish()
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first, "no AgentChat message")
    return transcript


def _is_saved_result(value: Any) -> bool:
    """A ``TaskResult`` saved in a list: the last item of ``run_stream``, kept with the rest."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("messages"), list)
        and value.keys() <= {"messages", "stop_reason"}
    )


def _stream_result(
    source: Source, builder: AutogenBuilder, result: Mapping[str, Any], line: int, *,
    repeats: bool,
) -> None:  # fmt: skip
    """The ``TaskResult`` that ends a saved ``run_stream``: its ``stop_reason`` is kept; its
    messages are the stream's own again when messages came before it (read once), else the
    run itself (a list of ``TaskResult``s)."""
    if result.get("stop_reason") is not None:
        builder.transcript.metadata["stop_reason"] = result["stop_reason"]
    source.mapped("TaskResult")
    if not repeats:
        for message in result["messages"]:
            _feed(source, builder, message, line)


def _top_level(source: Source, transcript: Transcript, key: str, value: Any) -> None:
    if key == "messages":
        return  # its messages are accounted for one by one
    if key == "stop_reason":
        if value is not None:
            transcript.metadata["stop_reason"] = value
        source.mapped(key)
    elif isinstance(value, (str, int, float, bool, type(None))):
        if value is not None:
            transcript.metadata.setdefault(key, value)
        source.mapped("other key")
    else:
        source.ignored("other state")


def _feed(source: Source, builder: AutogenBuilder, message: Any, line: int) -> None:
    if isinstance(message, MalformedLine):
        source.warn(message.reason, line, record_type=type_of_record(message))
        return
    kind = message_type(message)
    if isinstance(message, Mapping) and _OBJECT_KEY in message:
        kind = f"({message[_OBJECT_KEY]} object)"
    if not is_message(message):
        source.warn(f"{kind} is no AgentChat message, skipped", line, record_type=kind)
        return
    before = warning_count(builder.transcript.warnings)
    builder.feed(message, line)
    source.note(kind, "warned" if warning_count(builder.transcript.warnings) > before else "mapped")


# --- following run_stream (spec A-2) ------------------------------------------------------


class Follower:
    """``run_stream``'s items, one at a time: each message as it comes (streamed chunks grow
    their message's text), then the ``TaskResult``, whose copy of the messages is not read
    again (its ``stop_reason`` is). ``close`` settles what is still open as :func:`read`
    leaves it."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.builder = AutogenBuilder(transcript, "<follow>", live=True)
        self._line = 0

    def feed(self, event: Any) -> None:
        if _is_task_result(event):
            if event.stop_reason is not None:
                self.transcript.metadata["stop_reason"] = event.stop_reason
            if self._line == 0:  # only the result was given: its messages are the run
                for message in event.messages:
                    self._one(message)
            return
        if _is_response(event):  # on_messages_stream: its inner messages came before it
            event = event.chat_message
        self._one(event)

    def _one(self, message: Any) -> None:
        self._line += 1
        record = _dump(message)
        if not is_message(record):
            kind = record.get(_OBJECT_KEY) if isinstance(record, Mapping) else None
            kind = kind or message_type(record)
            self.builder.warn(f"{kind} is no AgentChat message, not shown", self._line)
            return
        self.builder.feed(record, self._line)

    def close(self) -> None:
        self.builder.finish()


_USAGE = "; models_usage → Usage"
RECORDS = Records(
    mapped={
        "TextMessage": "UserMessage from user (or a user proxy asked for input), else "
        "AssistantText, meta['agent'] = source" + _USAGE,
        "MultiModalMessage": "as TextMessage; a user's images on the UserMessage",
        "StructuredMessage": "AssistantText of its format_string or JSON, meta['structured']",
        "ThoughtEvent": "Thinking",
        "ToolCallRequestEvent": "a ToolCall per FunctionCall (arguments parsed), the event "
        "as their batch" + _USAGE + " in the first call's meta",
        "ToolCallExecutionEvent": "settles each call by call_id: is_error → error, else "
        "success; an agent tool's result closes its SubAgent transcript",
        "ToolCallSummaryMessage": "SystemNotice (tool_call_summary): AutoGen's join of the "
        "results, no answer of the model; calls no request listed become ToolCalls",
        "HandoffMessage": "the transfer_to_<target> call gets a SubAgent holding the "
        "target's messages until a handoff back or the turn's end (the answer goes on top); "
        "to user: SystemNotice (handoff)",
        "StopMessage": "SystemNotice (stop), metadata['stop_message']",
        "SelectSpeakerEvent": "SystemNotice (speaker) when the speaker changes",
        "SelectorEvent": "SystemNotice (selector)",
        "MemoryQueryEvent": "a memory_query ToolCall (memory read), the memories as its result",
        "UserInputRequestedEvent": "the source's next message is the user's (UserMessage)",
        "CodeGenerationEvent": "AssistantText, and an execute_code ToolCall for its code blocks",
        "CodeExecutionEvent": "settles execute_code: exit_code 0 → success, else error",
        "ModelClientStreamingChunkEvent": "the text so far of the message full_message_id "
        "names, which replaces it; a <think> section it opens with as Thinking, which the "
        "ThoughtEvent completes",
        "stop_reason": "metadata['stop_reason']",
        "TaskResult": "the TaskResult a saved run_stream list ends with: its stop_reason as "
        "metadata['stop_reason']; its messages, the stream's again, read only when none came "
        "before it",
        "other key": "other top-level scalars of the document: metadata under their names",
    },
    ignored={
        "other state": "other objects beside a TaskResult's messages",
    },
)
