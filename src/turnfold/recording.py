"""Record a live agent run into a transcript while it is displayed (spec L-5).

An agent loop in the notebook, or in a thread, tells a :class:`Recorder` what happens; every
change goes through :meth:`Transcript.append` / :meth:`Transcript.update`, so observers (the
widget) hear of exactly that change, and appending is thread-safe.

>>> rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
>>> _ = rec.user("List the sources")
>>> call = rec.start_tool("LS", {"path": "src"})
>>> _ = rec.finish_tool(call, "a.py\\nb.py")
>>> _ = rec.assistant("There are two files.")
>>> [(e.kind, getattr(e, "status", "")) for e in rec.transcript]
[('user', ''), ('tool_call', 'success'), ('assistant', '')]
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any, Protocol, TypeVar

from turnfold.formats.common import describe_args, stringify, text_result
from turnfold.model import (
    ACTIVE_STATUSES,
    AbortMarker,
    AssistantError,
    AssistantText,
    Entry,
    PendingAction,
    PendingKind,
    SubAgent,
    SystemNotice,
    Thinking,
    ThinkingForm,
    ToolCall,
    ToolResult,
    ToolStatus,
    ToolUseSummary,
    Transcript,
    Usage,
    UserMessage,
    checked_status,
)

E = TypeVar("E", bound=Entry)

_LOG = logging.getLogger(__name__)

#: Told the calls of a batch when the batch closes (see :meth:`Recorder.on_batch_closed`).
BatchListener = Callable[[list[ToolCall]], None]


class BatchLabeller(Protocol):
    """What ``Recorder(labeller=...)`` accepts: something that attaches to a recorder, such as
    :class:`turnfold.summaries.TranscriptLabeller`, whose ``transcript`` the recorder extends
    when it is given no transcript of its own."""

    transcript: Transcript

    def attach(self, recorder: Recorder) -> object: ...


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Recorder:
    """Appends a live run to ``transcript`` (a new one if not given).

    Tool calls started one after another share a *batch* until :meth:`end_batch`, an assistant
    text, thinking or a user message closes it, mirroring how a model issues calls together.
    ``clock`` returns ISO-8601 timestamps (injectable so tests are deterministic).

    ``labeller`` (a :class:`turnfold.summaries.TranscriptLabeller`) is attached at once, so each
    batch that closes is labelled in the background (spec S-6); without a ``transcript`` the
    recorder then extends the labeller's. :meth:`on_batch_closed` is the hook it uses.
    An :meth:`abort` closes the open batch without telling the listeners: it gets no label.
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        *,
        cwd: str | None = None,
        clock: Callable[[], str] = _utc_now,
        labeller: BatchLabeller | None = None,
    ) -> None:
        if transcript is None and labeller is not None:
            transcript = labeller.transcript
        self.transcript = transcript if transcript is not None else Transcript()
        self.cwd = cwd
        self._clock = clock
        self._lock = threading.RLock()
        self._batch: str | None = None
        self._batches = 0
        self._calls = 0
        self._batch_calls: list[ToolCall] = []
        self._batch_listeners: list[BatchListener] = []
        self._abort_listeners: list[Callable[[], None]] = []
        if labeller is not None:
            labeller.attach(self)

    # --- hooks -------------------------------------------------------------------------------

    def on_batch_closed(self, listener: BatchListener) -> Callable[[], None]:
        """Call ``listener(calls)`` with the calls of each batch as it closes; returns a function
        that stops it.

        A batch closes on :meth:`end_batch`, an assistant text, thinking, a user message or
        :meth:`fail`, before the closing entry is appended; its calls may still be running. The
        listener runs on the recording thread with the recorder locked, so it must be quick (a
        labeller only queues work); an exception in it is logged, never raised into the agent.
        """
        with self._lock:
            self._batch_listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._batch_listeners:
                    self._batch_listeners.remove(listener)

        return stop

    def on_abort(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` when :meth:`abort` is called, before any call is cancelled (a
        labeller drops the labels of the turn); returns a function that stops it."""
        with self._lock:
            self._abort_listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._abort_listeners:
                    self._abort_listeners.remove(listener)

        return stop

    def _close_batch(self, *, notify: bool = True) -> None:
        """End the open batch (the caller holds the lock) and tell the listeners about it."""
        self._batch = None
        calls, self._batch_calls = self._batch_calls, []
        if not (notify and calls):
            return
        for listener in list(self._batch_listeners):
            try:
                listener(list(calls))
            except Exception:  # a labelling hook must never break the agent's loop (S-6)
                _LOG.exception("turnfold: a batch listener failed")

    # --- messages --------------------------------------------------------------------------

    def user(self, text: str, *, command: str | None = None) -> UserMessage:
        """The user's request; it closes any open batch."""
        with self._lock:
            self._close_batch()
            return self._append(UserMessage(text=_text(text, "user"), command=command))

    def assistant(
        self, text: str, *, model: str | None = None, usage: Usage | None = None
    ) -> AssistantText:
        """Assistant text: a progress note, or the answer if nothing follows it (spec P-2)."""
        with self._lock:
            self._close_batch()
            entry = AssistantText(text=_text(text, "assistant"), model=model, usage=usage)
            return self._append(entry)

    def thinking(
        self, text: str = "", *, form: ThinkingForm = "text", streaming: bool = False
    ) -> Thinking:
        """Reasoning; ``streaming=True`` while it is still arriving (see :meth:`stream`)."""
        with self._lock:
            self._close_batch()
            entry = Thinking(text=_text(text, "thinking"), form=form, streaming=streaming)
            return self._append(entry)

    def stream(self, entry: AssistantText | Thinking, more: str, *, done: bool = False) -> None:
        """Append ``more`` text to a streaming answer or thinking row; ``done`` ends a stream."""
        changes: dict[str, Any] = {"text": entry.text + _text(more, "stream")}
        if isinstance(entry, Thinking) and done:
            changes["streaming"] = False
        self.transcript.update(entry, **changes)

    def notice(self, text: str, *, level: str = "info") -> SystemNotice:
        """A message from the runtime rather than the model."""
        notice = SystemNotice(text=_text(text, "notice"), level=level)  # type: ignore[arg-type]
        return self._append(notice)

    # --- tool calls --------------------------------------------------------------------------

    def start_tool(
        self,
        name: str,
        args: Any = None,
        *,
        call_id: str | None = None,
        description: str | None = None,
        status: ToolStatus = "executing",
        user_initiated: bool = False,
    ) -> ToolCall:
        """A tool call begins; it joins the open batch or opens a new one."""
        checked_status(status)  # a ToolCall made here takes it unchecked
        with self._lock:
            if self._batch is None:
                self._batches += 1
                self._batch = f"live-batch-{self._batches}"
            self._calls += 1
            call = ToolCall(
                call_id=call_id or f"live-call-{self._calls}",
                name=name,
                args=args,
                description=description or describe_args(name, args, self.cwd),
                status=status,
                batch_id=self._batch,
                started_at=self._clock(),
                user_initiated=user_initiated,
            )
            self._batch_calls.append(call)
            return self._append(call)

    def update_tool(
        self,
        call: ToolCall | str,
        *,
        status: ToolStatus | None = None,
        result: Any = None,
    ) -> ToolCall:
        """Change a running call's status (``confirming`` while it awaits approval) or output
        (text, a :class:`ToolResult`, or any value the tool returned, shown as JSON)."""
        target = self._call(call)
        changes: dict[str, Any] = {}
        if status is not None:
            changes["status"] = status  # checked by Transcript.update
        if result is not None:
            changes["result"] = _result(result)
        self.transcript.update(target, **changes)
        return target

    def finish_tool(
        self,
        call: ToolCall | str,
        result: Any = None,
        *,
        status: ToolStatus = "success",
    ) -> ToolCall:
        """A call finished with ``status`` (``success``, ``error`` or ``cancelled``) and its
        output (text, a :class:`ToolResult`, or any value the tool returned, shown as JSON)."""
        if status in ACTIVE_STATUSES:  # any other is checked by Transcript.update
            raise ValueError(f"a finished call cannot be {status!r}; use update_tool")
        target = self._call(call)
        changes: dict[str, Any] = {"status": status, "ended_at": self._clock()}
        if result is not None:
            changes["result"] = _result(result)
        self.transcript.update(target, **changes)
        return target

    def end_batch(self) -> None:
        """The calls of the current model response are all issued; the next call starts a batch."""
        with self._lock:
            self._close_batch()

    def attach_subagent(
        self,
        call: ToolCall | str,
        transcript: Transcript,
        *,
        name: str | None = None,
        task: str | None = None,
        **stats: Any,
    ) -> SubAgent:
        """Nest a sub-agent's own transcript (a live one keeps growing) under its spawning call.

        ``stats`` are :class:`SubAgent` fields such as ``tool_count`` or ``output_tokens``.
        """
        target = self._call(call)
        agent = SubAgent(name=name, task=task or target.description, transcript=transcript, **stats)
        self.transcript.update(target, subagent=agent)
        return agent

    def label(self, calls: list[ToolCall | str], label: str) -> ToolUseSummary:
        """A tool-use summary label for the batch holding ``calls`` (spec S-1).

        A call named by its call id is the latest call of that id; the label keeps the calls'
        entry ids too, so it stays on them when a later call repeats the id.
        """
        found = [self._call(c) for c in calls]
        # A call given as an object that is not in this transcript has no entry id here: then
        # the label names its calls by their call ids alone, as a label always did.
        mine = all(self.transcript.get(call.id) is call for call in found)
        entry_ids = [call.id for call in found] if mine else []
        return self._append(
            ToolUseSummary(
                label=label, call_ids=[call.call_id for call in found], entry_ids=entry_ids
            )
        )

    # --- how a turn ends ---------------------------------------------------------------------

    def pending(
        self, action: PendingKind, text: str, *, call_id: str | None = None
    ) -> PendingAction:
        """A decision waiting on the user: a permission, a question, a plan or a goal."""
        return self._append(
            PendingAction(action=action, text=_text(text, "pending"), call_id=call_id)
        )

    def abort(self, reason: str | None = None) -> AbortMarker:
        """The user stopped the turn: running calls become cancelled, the header reads stopped."""
        with self._lock:
            for listener in list(self._abort_listeners):
                try:
                    listener()
                except Exception:  # never break the agent's loop (S-6)
                    _LOG.exception("turnfold: an abort listener failed")
            for call in self.transcript.tool_calls():
                if call.status in ACTIVE_STATUSES:
                    self.transcript.update(call, status="cancelled", ended_at=self._clock())
            self._close_batch(notify=False)  # an aborted batch gets no label (spec S-2)
            return self._append(AbortMarker(reason=reason))

    def fail(self, message: str) -> AssistantError:
        """The turn failed (an API error, a crash); shown outside the fold (spec P-3)."""
        with self._lock:
            self._close_batch()
            return self._append(AssistantError(message=_text(message, "fail")))

    # --- internals ---------------------------------------------------------------------------

    def _append(self, entry: E) -> E:
        if entry.timestamp is None:
            entry.timestamp = self._clock()
        self.transcript.append(entry)
        return entry

    def _call(self, call: ToolCall | str) -> ToolCall:
        if isinstance(call, ToolCall):
            return call
        for candidate in reversed(self.transcript.tool_calls()):
            if candidate.call_id == call:
                return candidate
        raise KeyError(f"no tool call with call_id {call!r}")


def _text(value: Any, method: str) -> str:
    """The text a method was given, refused at the call when it is not a string: the view
    would fail on it later, far from the line of the agent's code that passed it."""
    if not isinstance(value, str):
        raise TypeError(f"Recorder.{method}() takes text (a str), not {type(value).__name__}")
    return value


def _result(value: Any) -> ToolResult:
    """A tool's output as a :class:`ToolResult`: its text, or whatever the tool returned (a
    dict, a list, a number) as readable JSON, as a loader shows a recorded tool's output."""
    return value if isinstance(value, ToolResult) else text_result(stringify(value))


class MessageSync:
    """Keeps a transcript in step with a growing OpenAI or Anthropic message list.

    Call :meth:`sync` with the whole list after each model or tool step; only the messages not
    seen before are converted and appended, and a tool result updates its call in place.

    >>> messages = [{"role": "user", "content": "hi"}]
    >>> sync = MessageSync()
    >>> sync.sync(messages)
    1
    >>> messages.append({"role": "assistant", "content": "hello"})
    >>> sync.sync(messages)
    1
    >>> [e.kind for e in sync.transcript]
    ['user', 'assistant']
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        *,
        format: str | None = None,
        cwd: str | None = None,
    ) -> None:
        self.transcript = transcript if transcript is not None else Transcript()
        self.format = format
        self.cwd = cwd
        self._builder: Any = None
        # True while only plain-text messages were seen, which read the same in every API, so
        # the first distinctive message may still choose the format.
        self._undecided = format is None
        self._seen = 0
        self._lock = threading.Lock()

    def sync(self, messages: list[Any] | tuple[Any, ...]) -> int:
        """Append what is new in ``messages`` since the last call; returns how many were new."""
        from turnfold.formats.source import from_object

        with self._lock:
            if len(messages) < self._seen:
                raise ValueError(
                    f"the message list shrank from {self._seen} to {len(messages)} messages; "
                    "start a new MessageSync for a new conversation"
                )
            new = list(messages[self._seen :])
            if not new:
                return 0
            source = from_object(new, "<messages>")
            if self._builder is None or (
                self._undecided and not _plain_text_messages(source.document)
            ):
                self._builder = self._make_builder(source)
                self._undecided = _plain_text_messages(source.document)
            for line, item in source.records():
                self._builder.feed(item, self._seen + line)
            self._seen = len(messages)
            return len(new)

    def _make_builder(self, source: Any) -> Any:
        from turnfold.formats import anthropic, openai_chat, openai_responses

        builders: dict[str, Any] = {
            anthropic.NAME: (anthropic, "AnthropicBuilder"),
            openai_responses.NAME: (openai_responses, "ResponsesBuilder"),
            openai_chat.NAME: (openai_chat, "OpenAIChatBuilder"),
        }
        name = None if self._undecided else self.format
        if name is None:
            from turnfold.formats import detection

            evidence = [(n, module.detect(source)) for n, (module, _) in builders.items()]
            try:
                name = detection.choose(evidence) or openai_chat.NAME
            except detection.AmbiguousFormat:
                name = openai_chat.NAME
        if name not in builders:
            raise ValueError(f"sync() reads {', '.join(builders)} message lists, not {name!r}")
        self.format = name
        module, cls = builders[name]
        return getattr(module, cls)(self.transcript, "<messages>", cwd=self.cwd, live=True)


def _plain_text_messages(items: list[Any]) -> bool:
    """Whether every message is ``{role: user|assistant, content: str}``: the same in both APIs."""
    return all(
        isinstance(item, Mapping)
        and item.get("role") in ("user", "assistant")
        and isinstance(item.get("content"), str)
        for item in items
    )
