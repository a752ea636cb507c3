"""Claude Code's ``stream-json`` output (spec H-5): ``claude -p --output-format stream-json
--verbose``, also the Claude Agent SDK's messages saved as JSON lines or as one JSON array.

Events (``type``, and ``subtype`` for ``system`` and ``result``):

- ``system/init`` → metadata: ``session_id``, ``model``, ``cwd`` (calls name paths relative to
  it), ``version``
  (``claude_code_version``), ``agent`` ``claude-code``; Qwen Code's ``qwen -p --output-format
  stream-json`` prints the same events, its init with ``qwen_code_version`` (``agent`` ``qwen``,
  and the differences below). Each prompt's run begins with one (several prompts on the stdin
  of one process with ``--input-format stream-json``, a resumed run's stream appended to the
  same file, a run a background agent's notification started), so each begins a turn: a
  prompt marked not recorded (:func:`~turnfold.formats.common.prompt_not_recorded`), unless
  the transcript already ends with its prompt (a follower's, recorded by its notebook);
- ``assistant`` → the Anthropic message's blocks (:mod:`~turnfold.formats.anthropic_blocks`, as
  the ``anthropic`` loader maps them). Claude Code writes one event per content block, each with
  the whole message's ``usage``: the usage is counted once per ``message.id``, on its last text
  (a message without text: on its first thinking or call). It is the usage of the API's
  ``message_start``: the input and cache counts are the response's, but ``output_tokens`` is
  the count at its start (1, say), as the CLI writes a block before the response's final count
  arrives and never writes it again. The response's output count is its ``message_delta``'s
  (below); without one (no ``--include-partial-messages``, or a sub-agent's response, which
  has no partial events) it is not recorded (the run's total is the ``result``'s). A message
  whose usage is ``{"input_tokens": 0, "output_tokens": 0}`` (an Anthropic-compatible server
  that sent none, GLM by ``ANTHROPIC_BASE_URL``) records none. An event
  with an ``error``
  (``rate_limit``, ``authentication_failed``…: the CLI's message for a failed API request) is
  an :class:`~turnfold.model.AssistantError` holding its text. Qwen Code starts a new message,
  with an id of its own, at each change of block kind within one response, and only the
  response's last message carries its usage (the others the CLI's empty default, both counts
  0, which records nothing): its messages up to that one are one response, whose usage goes on
  its last text. Its ``input_tokens`` count the cached ones too (``cache_read_input_tokens`` is
  their part); a sub-agent's messages carry no usage of their own;
- ``user`` → the ``tool_result`` blocks settle their calls (``is_error`` → ``error``), Claude
  Code's read as its session file reads them, the event's ``tool_use_result`` being the line's
  ``toolUseResult`` (a diff, a todo list, a sub-agent's report; a rejection ``cancelled``); text
  is a prompt (a sub-agent's task arrives this way), but an ``isSynthetic`` event's (the CLI's own
  words, ``Stop hook feedback: …``, which it keeps as ``isMeta``) a
  :class:`~turnfold.model.SystemNotice` of subtype ``synthetic``, and Claude Code's
  ``[Request interrupted by user…]`` an :class:`~turnfold.model.AbortMarker` that cancels the
  calls still running (as the session file's line reads). Neither CLI echoes the run's
  own prompt (``-p``, or one written on stdin with ``--input-format stream-json``) unless
  ``--replay-user-messages`` asks it to: then the prompt comes just after its run's ``init``
  and takes the place of the mark of a prompt not recorded;
- events with a ``parent_tool_use_id`` belong to the sub-agent that ``Task``/``Agent`` call
  started: they make its own transcript, nested under that call (F-7), at any depth;
- ``system/compact_boundary`` → a :class:`~turnfold.model.CompactionBoundary`;
- ``result`` → metadata (H-6): ``outcome`` (``error_max_turns`` → ``incomplete``, other
  ``error_*`` subtypes or ``is_error`` → ``error``, ``success`` → ``pass``), ``cost_usd``
  (``total_cost_usd``: the session's so far, which a ``--resume`` carries over, so where every
  ``result`` gives ``model_usage_since_last_result`` the run's cost is their ``costUSD`` added up,
  the total kept as ``session_cost_usd`` when it is more), ``duration_ms``, ``num_turns`` and
  ``model_usage`` (``modelUsage``), each the last ``result``'s, and the run's total ``usage`` in
  :mod:`turnfold.usage`'s names (cached input added in): a ``result``'s ``usage`` counts the
  session's own responses since the previous ``result`` (its sub-agents' apart), so a stream of
  several prompts adds them up, where its ``modelUsage`` and cost count every request the session
  has made so far, sub-agents' included. A failed run's ``result`` or ``errors`` text is an
  :class:`~turnfold.model.AssistantError`, but one that repeats the error the run's last event
  already gave (``API Error: 400 …``) is not shown twice. A run the user stopped
  (``terminal_reason`` ``aborted_streaming`` or ``aborted_tools``, subtype
  ``error_during_execution``) is ``incomplete``, not an error: it ends in an
  :class:`~turnfold.model.AbortMarker` (the CLI's ``[Request interrupted…]`` event's, or one of
  its own), and its ``errors`` (the CLI's ``[ede_diagnostic] …`` line) are not the run's.
  Stopped before the CLI counted any response (the SIGINT landing while the first one
  streamed, before its ``message_delta``), its ``usage`` is all zeros, the CLI's sum over no
  response (its ``total_cost_usd`` too, 0, when it had counted no model): that is no total,
  and the responses' own counts stand (the input on their messages, the output not recorded).
  After runs that recorded their totals (several prompts in one process), such a run's
  responses' counts are added to theirs: the session's total is then a lower bound
  (``usage_lower_bound``: its output leaves that run's out), as it is for a later run cut
  off before its ``result``, whose process's cost so far (the earlier runs') is then no
  session's cost and is not kept.
  Qwen Code's ``usage`` counts every model request the
  session has made so far (a resumed run's earlier runs and sub-agents' requests included), not
  this run's: it is kept as ``session_usage``, and the run's tokens are its responses' own. A
  stream that ends after an ``init`` without its run's ``result`` (the process was killed, its
  output cut off, or a SIGINT landed just after a message: Claude Code 2.1.332 then exits 0
  without one) is read by the rule every agent's headless stream shares
  (:func:`~turnfold.formats.common.stream_cut_off`): a warning, the run ``incomplete``, its
  turn stopped (a live feed is still running: :meth:`StreamReader.finish` says nothing of it);
- ``conversation_reset`` (``/clear``) → a :class:`~turnfold.model.SystemNotice`;
- ``system/api_retry`` (a failed API request the CLI retries: ``error_status``, the error's
  category, ``attempt`` of ``max_retries``) → a warning :class:`~turnfold.model.SystemNotice`,
  as the session file's ``system/api_error`` line it is made from reads;
- ``system/notification`` (a notice the CLI shows: ``Stop hook error occurred``) → a
  :class:`~turnfold.model.SystemNotice` of its ``text``;
- ``stream_event`` (``--include-partial-messages``: the API's raw streaming events) →
  ``message_delta``'s ``usage.output_tokens``, the response's final count, goes on the entry
  that carries the response's usage, with its input counts when it gives all three (they
  are cumulative, and grow when a server tool's results were read within the response);
  its message is the one the agent's last
  ``message_start`` began (``message.id``, the ``message.id`` of its ``assistant`` events;
  the CLI's ``api_message_id`` says the same, the SDK's ``StreamEvent`` drops it): one agent's
  responses do not overlap, and a sub-agent's events are its own thread;
- the task events (``system/task_*``, ``system/background_tasks_changed``) of a sub-agent
  (``local_agent``) or a background command (``local_bash``) →
  the duration of the call with their ``tool_use_id`` (F-7):
  the call's own ``tool_use_result.totalDurationMs`` (a foreground agent's, as the session
  file's line reads), else ``task_notification``'s ``usage.duration_ms`` (a command's: its
  ``duration_ms``), else its end less its start (CLI 2.1.337: the task list's
  ``start_time``, else ``task_started``'s
  ``written_at``; ``task_updated``'s ``patch.end_time``, else the notification's
  ``written_at``). A call launched in the background (its result an agent's
  ``async_launched``, a command's ``backgroundTaskId``) ran as long, and ends as the
  session file's ``<task-notification>`` ends it: ``task_notification``'s ``status``
  (``completed`` → ``success``, ``failed`` → ``error``, ``stopped`` → ``cancelled``) is its
  outcome, a command's ``summary`` (``… failed with exit code 3``) added to its result, an
  agent's ``handback_report`` (a report handed back through ``SubagentHandback``, its
  ``warning`` above it) or its ``summary`` when ``summary_is_report`` says it is the report (the
  session file's ``<result>``; else it is the task's description and the call keeps its
  launch's result, as the session file's reader does); until
  then a background agent is running (``executing`` live, ``unknown`` in a stream that ends
  first), a command as its launch left it. What else they announce (progress) the
  sub-agent's own messages and its call's result hold;
- thinking-token estimates and the other ``stream_event`` records are left out: the
  messages above hold what they announce.

:class:`StreamReader` reads the events one at a time, for :func:`read` and live (the Claude
Agent SDK's follower): there calls are ``executing`` until their result arrives, a sub-agent
is nested as soon as its first event arrives, and ``stream_event`` text and thinking deltas
grow an entry that the block's whole ``assistant`` event then settles in place.

Detection: ``session_id`` (snake case) with ``parent_tool_use_id`` on messages, the ``init``
and ``result`` events; Claude Code's own session files have ``sessionId`` and ``uuid`` chains,
Anthropic message lists have ``role`` at the top.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from functools import partial
from typing import Any, TypeVar

from turnfold.formats.anthropic import AnthropicBuilder
from turnfold.formats.anthropic_blocks import usage_of, with_one_hour_writes
from turnfold.formats.catalog import Records
from turnfold.formats.claude_code import (
    background_agent_result,
    handback_report,
    interruption,
    launched_async,
    model_usage_totals,
    notified_status,
    recorded_duration,
    retry_notice,
    tool_outcome,
)
from turnfold.formats.common import (
    NameSet,
    calls_with_holders,
    checked_timestamp,
    epoch_iso,
    prompt_not_recorded,
    stream_cut_off,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine
from turnfold.formats.protocol import not_read
from turnfold.formats.source import Source, warning_count
from turnfold.formats.wording import failure, stop
from turnfold.formats.wording import notice as worded_notice
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
    span_ms,
)
from turnfold.usage import (
    USAGE_KINDS,
    Tokens,
    add_into,
    carries,
    count_tokens,
    counts_of,
    output_not_recorded,
    subagent_tokens,
)

NAME = "claude-stream-json"

RECORDS = Records(
    mapped={
        "system/init": "metadata: session id, model, working folder, Claude Code version; "
        "a run begins: its turn's prompt marked not recorded (a replayed prompt takes its place)",
        "assistant": "text, thinking and tool calls of one content block (usage once per message)",
        "stream_event/message_delta": "the response's final output count (and input "
        "counts), on the entry that carries its usage",
        "user": "tool results settling their calls; text as a prompt (an isSynthetic "
        "event's, the CLI's own words, as a notice)",
        "system/compact_boundary": "a compaction boundary",
        "result": "outcome, cost, duration, turns and total usage (metadata); a failure as "
        "an error",
        "conversation_reset": "a notice: the conversation was cleared (/clear)",
        "system/notification": "a notice of the CLI (a hook that failed…): its text",
        "system/api_retry": "a failed API request the CLI retries: a warning notice (the "
        "error, the attempt), as the session file's api_error",
        "system/task_started": "a sub-agent or background command started: the time it was "
        "written (written_at, CLI 2.1.337) as its start; its events and its call's result "
        "hold the rest",
        "system/task_updated": "a task's state change: its end_time as its end; its "
        "notification gives the outcome",
        "system/task_notification": "a task ended: its recorded duration (usage.duration_ms, "
        "a command's duration_ms) on its call, and, for a call launched in the background, its "
        "status as the call's outcome (a command's summary added to its result, an agent's "
        "report, summary_is_report, its result)",
        "system/background_tasks_changed": "the tasks running in the background: each "
        "one's start_time (CLI 2.1.337) as its start; their own events hold their steps",
    },
    ignored={
        "system/thinking_tokens": "an estimate of thinking tokens while the model thinks",
        "system/task_progress": "a sub-agent's progress: its own events hold its steps",
        "system/hook_started": "a hook run; hooks that fail or speak leave a user event",
        "system/hook_response": "a hook's output",
        "system/status": "a status line of the CLI",
        "stream_event": "the other partial-message events; the assistant events hold whole blocks",
        "rate_limit_event": "rate-limit state of the account",
    },
)

_E = TypeVar("_E", bound=Entry)
_MESSAGE_TYPES = NameSet({"assistant", "user"})
#: Every event type the reader knows (what :attr:`StreamReader.recognized` counts).
_KNOWN = NameSet(RECORDS.known() | _MESSAGE_TYPES)
_OUTCOMES = {"success": "pass", "error_max_turns": "incomplete"}
#: A ``result``'s ``terminal_reason`` when the user stopped the run (Claude Code 2.1.3xx): the
#: CLI's own host shows such a turn as stopped, not failed, and leaves out its ``errors`` (an
#: ``[ede_diagnostic] …`` line of the CLI's, not an error of the run).
_ABORTED = NameSet({"aborted_streaming", "aborted_tools"})
#: The usage Qwen Code gives a message before its response's usage is known, and the one
#: Claude Code writes when an Anthropic-compatible server (GLM, say, by ANTHROPIC_BASE_URL)
#: sent none: a real response reads at least one input token.
_NO_USAGE = {"input_tokens": 0, "output_tokens": 0}
#: The one partial-message event a load maps (the others are left out).
_DELTA = "stream_event/message_delta"


def _kind(record: Mapping[str, Any]) -> str:
    kind = record.get("type")
    kind = kind if isinstance(kind, str) and kind else "(object)"
    subtype = record.get("subtype")
    if kind == "system" and isinstance(subtype, str) and subtype:
        return f"system/{subtype}"
    event = record.get("event")
    if kind == "stream_event" and isinstance(event, Mapping):
        return _DELTA if event.get("type") == "message_delta" else kind
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
    return Evidence.of_events(source, _classify, _LACKS)


# --- reading --------------------------------------------------------------------------------


class _Builder(AnthropicBuilder):
    """An :class:`AnthropicBuilder` that lists the entries each ``feed`` gave, and in a live
    feed lets a block's final entry take the place of the entry its partial-message deltas
    grew (same kind, in block order), so the growing text settles where it is shown."""

    def __init__(self, transcript: Transcript, source_name: str, *, live: bool) -> None:
        super().__init__(transcript, source_name, live=live)
        self.fed: list[Entry] = []
        self.pending: deque[Entry] = deque()  # entries grown from partial messages
        #: The user event being fed is ``isSynthetic``: the CLI wrote its text, not the user.
        self.synthetic = False
        #: The mark of a run begun (``system/init``) whose prompt has not arrived: a prompt the
        #: CLI replays (``--replay-user-messages``) right after settles it in place.
        self.unprompted: UserMessage | None = None

    def _append(self, entry: Entry) -> Entry:
        if self.synthetic and isinstance(entry, UserMessage):
            # Claude Code reads such a message as isMeta (Stop hook feedback, ...): context
            # it gives the model, shown as a notice rather than as the user's prompt.
            entry = SystemNotice(text=entry.text, subtype="synthetic", timestamp=entry.timestamp)
        elif isinstance(entry, UserMessage) and (reason := interruption(entry.text)) is not None:
            # The user stopped the turn (as the session file's line reads): the calls still
            # running were stopped with it.
            entry = AbortMarker(reason=reason, timestamp=entry.timestamp)
            for call in self._calls.values():
                if call.result is None and call.status in ("unknown", "executing"):
                    self.transcript.update(call, status="cancelled")
        entries = self.transcript.entries
        unprompted, self.unprompted = self.unprompted, None
        if isinstance(entry, UserMessage) and unprompted is not None and entries[-1] is unprompted:
            # The run's prompt, replayed: recorded after all, where its mark stood.
            self._take_place(unprompted, entry)
            entry = unprompted
        elif self.pending and type(self.pending[0]) is type(entry):
            grown = self.pending.popleft()
            self._take_place(grown, entry)
            entry = grown
        else:
            entry = self.transcript.append(entry)
        self.fed.append(entry)
        return entry

    def _take_place(self, shown: Entry, entry: Entry) -> None:
        """``shown`` (already in the transcript) takes every field of ``entry`` but its id."""
        changes = {f.name: getattr(entry, f.name) for f in fields(entry) if f.name != "id"}
        self.transcript.update(shown, **changes)


class _Thread:
    """One agent's messages: the session's, or a sub-agent's (by its parent tool use id)."""

    def __init__(
        self, name: str, *, live: bool, transcript: Transcript | None = None, format: str = NAME
    ) -> None:
        if transcript is None:
            transcript = Transcript(metadata={"source_format": format})
        self.transcript = transcript
        self.builder = _Builder(self.transcript, name, live=live)
        self.last_text: dict[str, AssistantText] = {}  # response key → its last text so far
        self.parked: dict[str, Entry] = {}  # response key → the entry its usage waits on
        self.response: str | None = None  # Qwen Code: the key of the response being written
        self.growing: dict[int, Entry] = {}  # content block index → its partial entry
        self.streamed: str | None = None  # the message id of the last message_start
        #: The calls whose result says they were launched in the background, ``agent`` (its
        #: ``async_launched``) or ``command`` (its ``backgroundTaskId``): their task
        #: notification says how they ended (:meth:`StreamReader._settle`).
        self.background: dict[str, str] = {}

    def assistant(
        self, record: Mapping[str, Any], message: Mapping[str, Any], line: int, *, qwen: bool
    ) -> None:
        """One content block's event; the response's usage moves to its newest text. A message
        the CLI wrote for a failed API request (``error``) is an :class:`AssistantError`."""
        own_id = message.get("id")
        error = record.get("error")
        content = message.get("content")
        texts_of_error: list[str] = []
        if isinstance(error, str) and error and isinstance(content, list):
            texts_of_error = [
                b["text"]
                for b in content
                if isinstance(b, Mapping)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            ]
            content = [
                b for b in content if not (isinstance(b, Mapping) and b.get("type") == "text")
            ]
        self.builder.feed(
            {k: (content if k == "content" else v) for k, v in message.items() if k != "usage"},
            line,
        )
        if isinstance(error, str) and error:
            text = "\n".join(t for t in texts_of_error if t) or f"The API request failed: {error}."
            self.builder.fed.append(
                self.transcript.append(AssistantError(message=text, meta={"error": error}))
            )
        texts = [e for e in self.builder.fed if isinstance(e, AssistantText)]
        key = own_id if isinstance(own_id, str) else f"line-{line}"
        if qwen:
            # One response is several messages, ids apart; its usage comes on the last one.
            key = self.response = self.response or key
            usage = _qwen_usage(message.get("usage"))
            if usage is not None:
                self.response = None
        else:
            usage = _claude_usage(message.get("usage"))
        if texts:
            previous = self.last_text.get(key)
            if previous is not None and previous is not texts[-1] and previous.usage is not None:
                self.transcript.update(previous, usage=None)
            parked = self.parked.pop(key, None)
            if parked is not None:
                self.transcript.update(parked, usage=None)
            self.last_text[key] = texts[-1]
            self.transcript.update(texts[-1], usage=usage)
        elif usage is not None:
            carrier: Entry | None = self.last_text.get(key)
            if carrier is None and self.builder.fed:
                # A message of calls and thinking only: its usage on its first entry (as
                # attach_usage does), until a text of the same message takes it.
                carrier = self.parked.setdefault(key, self.builder.fed[0])
            # Claude Code repeats the usage its text already has; Qwen Code's comes after it.
            if carries(carrier, usage) and carrier.usage != usage:
                self.transcript.update(carrier, usage=usage)

    def partial(self, event: Mapping[str, Any]) -> None:
        """One partial-message event: ``message_delta`` gives its message's final output
        count; in a live feed, text and thinking deltas grow an entry that the block's whole
        message later settles (:class:`_Builder`)."""
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            own_id = message.get("id") if isinstance(message, Mapping) else None
            self.streamed = own_id if isinstance(own_id, str) else None
            self.builder.pending.clear()  # what an unfinished message grew stays as it was
            self.growing.clear()
            return
        if kind == "message_delta":
            self._final_output(event.get("usage"))
            return
        if kind != "content_block_delta" or not self.builder.live:
            return
        index, delta = event.get("index"), event.get("delta")
        if not isinstance(index, int) or not isinstance(delta, Mapping):
            return
        if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
            entry = self.growing.get(index)
            if not isinstance(entry, AssistantText):
                entry = self._grow(index, AssistantText())
            self.transcript.update(entry, text=entry.text + delta["text"])
        elif delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
            entry = self.growing.get(index)
            if not isinstance(entry, Thinking):
                entry = self._grow(index, Thinking(streaming=True))
            self.transcript.update(entry, text=entry.text + delta["thinking"])

    def _final_output(self, usage: Any) -> None:
        """The streamed message's final counts (cumulative) on the entry that carries its
        usage: the API sends ``message_delta`` after every block's ``content_block_stop``,
        where the CLI writes the block's event, so the carrier is settled by then.

        Its output count is the response's. Its input counts, when it gives all three (the
        API's current ``message_delta``; an older one gave the output alone), are too: they
        grow past ``message_start``'s when a server tool (web search, code execution) ran
        within the response and its results were read as input."""
        count = usage.get("output_tokens") if isinstance(usage, Mapping) else None
        key = self.streamed
        if key is None or not isinstance(count, int) or isinstance(count, bool):
            return
        carrier: Entry | None = self.last_text.get(key)
        carrier = self.parked.get(key) if carrier is None else carrier
        if not isinstance(carrier, USAGE_KINDS) or carrier.usage is None:
            return
        final = replace(carrier.usage, output_tokens=count)
        given = (
            _claude_usage(usage) if all(type(usage.get(k)) is int for k in _INPUT_COUNTS) else None
        )
        if given is not None:
            final = replace(
                final,
                input_tokens=given.input_tokens,
                cache_read_tokens=given.cache_read_tokens,
                cache_write_tokens=given.cache_write_tokens,
            )
        self.transcript.update(carrier, usage=final)

    def _grow(self, index: int, entry: _E) -> _E:
        self.transcript.append(entry)
        self.growing[index] = entry
        self.builder.pending.append(entry)
        return entry


class StreamReader:
    """Reads stream-json events one at a time (``feed``) into a transcript, sub-agents' events
    nested under the calls that started them; ``finish`` ends the stream.

    Static (:func:`read`): every record is accounted for in ``source``; sub-agents are nested
    at the end. Live (``live=True``, a follower of a running agent): calls are ``executing``
    until their result arrives, a sub-agent's transcript is nested under its call as soon as
    its first event arrives, partial-message events grow the text being written, and
    ``finish`` leaves the transcript as :func:`read` of the same events would (a call still
    without a result is ``unknown``), but for a run left without its ``result``, which only a
    static read calls cut off (:func:`~turnfold.formats.common.stream_cut_off`).
    """

    def __init__(
        self,
        source: Source,
        *,
        live: bool = False,
        transcript: Transcript | None = None,
        format: str = NAME,
    ) -> None:
        self.source = source
        self.live = live
        self.format = format
        self.main = _Thread(source.name, live=live, transcript=transcript, format=format)
        self.threads: dict[str | None, _Thread] = {None: self.main}
        #: How many records were events of the stream (not warned about as something else).
        self.recognized = 0
        self.qwen = False  # Qwen Code's stream (its init says so)
        self.totals: Tokens = {}  # the usage of every result so far (Claude Code's)
        #: Each result's own cost (``model_usage_since_last_result``), None where it gives none.
        self.costs: list[float | None] = []
        self._nested: set[str] = set()
        #: The line of the ``system/init`` whose run has no ``result`` yet: a stream that ends
        #: with one set was cut off inside that run.
        self.open_run: int | None = None
        #: Where the last run's entries begin in the session's transcript.
        self.run_begun = 0
        #: Whether ``totals`` hold a run's input without its output (:meth:`_untotalled_run`).
        self.lower_bound = False
        #: What the task events recorded of each sub-agent's run, by task id.
        self.tasks: dict[str, _Task] = {}

    def feed(self, record: Any, line: int) -> None:
        """One record of the stream, accounted for in the source."""
        source, main = self.source, self.main
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            return
        if not isinstance(record, Mapping):
            source.warn("not a stream-json event", line)
            return
        kind = _kind(record)
        if kind in _KNOWN:
            self.recognized += 1
        if kind in ("stream_event", _DELTA):
            event = record.get("event")
            if isinstance(event, Mapping):
                self._thread(record).partial(event)
            if kind == _DELTA:
                source.mapped(kind)
            else:
                source.ignored(kind)
        elif kind in RECORDS.ignored:
            source.ignored(kind)
        elif kind in _MESSAGE_TYPES:
            _message(source, self._thread(record), record, kind, line, qwen=self.qwen)
        elif kind == "system/init":
            self.open_run = line
            self.run_begun = len(main.transcript.entries)
            _init(main.transcript, record)
            # Each prompt's run begins with an init (several in one process with
            # --input-format stream-json, or a resumed run's stream appended), and its prompt
            # is not in the stream: each run is a turn of its own all the same (P-1).
            entries = main.transcript.entries
            if not (entries and isinstance(entries[-1], UserMessage)):
                main.builder.unprompted = mark = prompt_not_recorded()
                main.transcript.append(mark)
            self.qwen = main.transcript.metadata["agent"] == "qwen"
            # The calls' paths are shown relative to the working folder the init names (its
            # sub-agents' too: they work in it).
            for thread in self.threads.values():
                thread.builder.cwd = main.transcript.metadata.get("cwd")
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
        elif kind == "system/notification":
            main.transcript.append(_notification(record))
            source.mapped(kind)
        elif kind == "system/api_retry":
            # The CLI makes this event of the session file's system/api_error while it retries
            # (error_status, its error's category), so it reads as that line does.
            error = {"status": record.get("error_status"), "message": record.get("error")}
            notice = retry_notice(error, record.get("attempt"), record.get("max_retries"))
            self._thread(record).transcript.append(notice)
            source.mapped(kind)
        elif kind in _TASK_EVENTS:
            # Its problems said once it is read: the event is counted once, warned, not mapped.
            said: list[str] = []
            self._task_event(record, kind, said)
            if not said:
                source.mapped(kind)
            for index, reason in enumerate(said):
                source.warn(reason, line, record_type=kind if index == 0 else None)
        elif kind == "conversation_reset":
            main.transcript.append(
                worded_notice("reader.conversation_cleared", subtype="conversation_reset")
            )
            source.mapped(kind)
        elif kind == "result":
            self.open_run = None
            if _result(main.transcript, record, self.totals, self.costs, qwen=self.qwen):
                self._untotalled_run()
            self._mark_lower_bound()
            source.mapped(kind)
        else:
            source.warn(f"unknown stream-json event {kind!r} skipped", line, record_type=kind)

    def _untotalled_run(self) -> None:
        """The last run ended without a total of its own (stopped before the CLI counted its
        responses, or cut off before its ``result``): its responses' own counts (their input:
        their output is not recorded) join the runs' totals, so that a session whose earlier
        runs recorded theirs shows every run's input, not the earlier runs' alone. Claude
        Code's only: Qwen Code's totals are the session's so far (``session_usage``)."""
        if self.qwen:
            return
        counted = count_tokens(self.main.transcript.entries[self.run_begun :])
        if not counted:
            return
        add_into(self.totals, counted)
        self.lower_bound = self.lower_bound or output_not_recorded(counted)
        meta = self.main.transcript.metadata
        if "usage" in meta:  # the runs before it recorded theirs: the session's is the sum
            meta["usage"] = dict(self.totals)

    def _mark_lower_bound(self) -> None:
        """The session's total holds a run's input without its output: it is a lower bound
        (``usage_lower_bound``, the header's ``≥``), and no cost is estimated on it. Alone,
        such a run's counts stand on its responses (no total), which say it themselves
        (:func:`~turnfold.usage.output_not_recorded`)."""
        meta = self.main.transcript.metadata
        if self.lower_bound and "usage" in meta:
            meta["usage_lower_bound"] = True

    def _thread(self, record: Mapping[str, Any]) -> _Thread:
        parent = record.get("parent_tool_use_id")
        key = parent if isinstance(parent, str) and parent else None
        thread = self.threads.get(key)
        if thread is None:
            thread = self.threads[key] = _Thread(
                self.source.name, live=self.live, format=self.format
            )
            if key is not None:
                thread.builder.cwd = self.main.builder.cwd
        if self.live and key is not None and key not in self._nested:
            self._nest_live(key, thread)
        return thread

    def _nest_live(self, key: str, thread: _Thread) -> None:
        """A sub-agent's transcript under its call while it runs, once the call is known."""
        for owner in self.threads.values():
            call = owner.builder._calls.get(key)
            if call is not None and owner is not thread:
                owner.transcript.update(call, subagent=_sub(thread, call))
                self._nested.add(key)
                return

    def finish(self) -> Transcript:
        """The stream ended: sub-agents nested with their final counts; in a live feed, a call
        still without a result has no recorded outcome (``unknown``), as in a static read. A
        static read of a stream cut off inside a run says so
        (:func:`~turnfold.formats.common.stream_cut_off`)."""
        if self.live:
            for thread in self.threads.values():
                for call in list(thread.builder._calls.values()):
                    if call.status == "executing":
                        thread.transcript.update(call, status="unknown")
        elif self.open_run is not None:
            meta = self.main.transcript.metadata
            if "cost_usd" in meta and not self.qwen:
                # The earlier runs' cost (the CLI's total so far): the cut run's is recorded
                # nowhere, so it is no session's cost.
                del meta["cost_usd"]
            self._untotalled_run()
            self._mark_lower_bound()
            stream_cut_off(self.source, self.main.transcript, self.open_run, "result")
        _nest(self.threads, self.source)
        for task in self.tasks.values():
            self._time(task)
            self._settle(task)
        return self.main.transcript

    def _task_event(self, record: Mapping[str, Any], kind: str, said: list[str]) -> None:
        """A task event's times (:class:`_Task`); live, a finished sub-agent's duration on
        its call at once. Its problems go in ``said``, for the event's line."""
        if kind == "system/background_tasks_changed":
            listed = record.get("tasks")
            for item in listed if isinstance(listed, list) else ():
                task = self._task(item)
                if task is not None and task.start is None:
                    task.start = self._stamp(item.get("start_time"), "start_time", kind, item,
                                             said)  # fmt: skip
            return
        task = self._task(record)
        if task is None:
            return
        if kind == "system/task_started":
            task.start = task.start or self._stamp(record.get("written_at"), "written_at", kind,
                                                   record, said)  # fmt: skip
        elif kind == "system/task_updated":
            patch = record.get("patch")
            end = patch.get("end_time") if isinstance(patch, Mapping) else None
            task.end = self._stamp(end, "patch.end_time", kind, record, said) or task.end
        elif kind == "system/task_notification":
            task.end = task.end or self._stamp(record.get("written_at"), "written_at", kind,
                                               record, said)  # fmt: skip
            usage = record.get("usage")
            # An agent's duration is in its usage; a command's (``local_bash``, which has no
            # usage) is the event's own.
            field, given = "usage.duration_ms", None
            if isinstance(usage, Mapping):
                given = usage.get("duration_ms")
            if given is None:
                field, given = "duration_ms", record.get("duration_ms")
            task.duration_ms = _milliseconds(given)
            if task.duration_ms is None and given is not None:
                said.append(
                    f"task_notification: {field} is not a number of milliseconds: {given!r:.40}"
                )
            self._notified(task, record, said)
        if self.live and kind in ("system/task_updated", "system/task_notification"):
            self._time(task)
            self._settle(task)

    def _stamp(
        self, value: Any, name: str, kind: str, task: Mapping[str, Any], said: list[str]
    ) -> str | None:
        """A task event's time: its ``written_at`` (ISO 8601), or a task's ``start_time`` or
        ``end_time`` (ms since the epoch); one that is no time is left out, said (in
        ``said``, for the event's line) naming the event and its task
        (``common.warned_timestamp``)."""
        what = f"{kind.removeprefix('system/')} of task {task.get('task_id')}"
        if name == "written_at":
            read: Callable[[Any], str | None] = checked_timestamp
            unit = None
        else:
            read, unit = partial(epoch_iso, per_second=1000), "ms since the epoch"
        return warned_timestamp(value, read, said.append, what, name=name, unit=unit)

    def _notified(self, task: _Task, record: Mapping[str, Any], said: list[str]) -> None:
        """How the task ended, as the session file's ``<task-notification>`` says it
        (:func:`~turnfold.formats.claude_code.notified_status`): ``completed``, ``failed`` or
        ``stopped``; a status not known is warned about, its call's outcome ``unknown``."""
        status = record.get("status")
        task.status = notified_status(status if isinstance(status, str) else "")
        if task.status == "unknown":
            said.append(
                f"task_notification: status {status!r:.40} is not one known: its call's "
                "outcome is unknown"
            )
        summary = record.get("summary")
        task.summary = summary if isinstance(summary, str) and summary.strip() else None
        # A hand-back's ``handback_report`` is the report, in place of the summary (then the
        # harness's notes); else only ``summary_is_report`` makes the summary the report (CLI
        # 2.1.337): it is otherwise its description or an interim text. A later report for
        # the task replaces it.
        task.report = handback_report(record.get("handback_report"))
        if task.report is None and record.get("summary_is_report") is True:
            task.report = task.summary
        if task.report is not None:
            task.settled = False

    def _settle(self, task: _Task) -> None:
        """A call launched in the background (:attr:`_Thread.background`) ends as its task
        notification says: its status, and, for a command, the notification's summary (``…
        failed with exit code 3``) after its launch's result, for an agent, its report in
        place of the launch's result, as the session file's ``<task-notification>`` settles
        it. A call whose own result says how it ended (a foreground agent's) keeps that."""
        if task.status is None or task.call_id is None or task.settled:
            return
        for owner in self.threads.values():
            call = owner.builder._calls.get(task.call_id)
            if call is None:
                continue
            launched = owner.background.get(task.call_id)
            if launched is None:
                return  # its launch's result is still to come, or it ran in the foreground
            changes: dict[str, Any] = {"status": task.status}
            result = call.result
            if launched == "command" and task.summary and result is not None:
                text = "\n".join(t for t in (result.text, task.summary) if t)
                changes["result"] = replace(result, text=text)
            elif launched == "agent":
                changes["result"] = background_agent_result(result, task.report)
            owner.transcript.update(call, **changes)
            task.settled = True
            return

    def _task(self, record: Any) -> _Task | None:
        """The task a record names (``task_id``), with its call (``tool_use_id``) when it
        names one."""
        task_id = record.get("task_id") if isinstance(record, Mapping) else None
        if not isinstance(task_id, str) or not task_id:
            return None
        task = self.tasks.setdefault(task_id, _Task())
        call_id = record.get("tool_use_id")
        if isinstance(call_id, str) and call_id:
            task.call_id = call_id
        return task

    def _time(self, task: _Task) -> None:
        """The sub-agent's duration on its call, unless its call's result recorded one (a
        foreground agent's ``totalDurationMs``): its run is its call's, which a background
        agent's call, whose result only says it was launched, lasted too."""
        duration = task.duration()
        if duration is None or task.call_id is None:
            return
        # Live, the end's time may come before the notification's recorded duration: the
        # duration this reader gave is its own to replace, the call's result's is not.
        ours = (None, task.timed)
        task.timed = duration
        for owner in self.threads.values():
            call = owner.builder._calls.get(task.call_id)
            if call is None:
                continue
            changes: dict[str, Any] = {}
            if call.duration_ms in ours:
                changes["duration_ms"] = duration
            agent = call.subagent
            if agent is not None and agent.duration_ms in ours:
                changes["subagent"] = replace(agent, duration_ms=duration)
            if changes:
                owner.transcript.update(call, **changes)
            return


def read(source: Source) -> Transcript:
    """The session's events, sub-agents' events nested under the calls that started them."""
    reader = StreamReader(source)
    for line, record in source.records():
        try:
            reader.feed(record, line)
        except Exception as exc:
            not_read(source, line, exc)
    transcript = reader.finish()
    subagent_usage(transcript)
    return transcript


# --- sub-agents' tokens (spec U-1) ---------------------------------------------------------


def subagent_usage(transcript: Transcript) -> None:
    """The sub-agents' output tokens, from the run's totals.

    The CLI streams a sub-agent's messages with its ``message_start`` usage (the input counts
    are the response's, the output count a placeholder) and no partial events, so the stream
    holds no sub-agent's output count. Its ``result`` does, within a sum: its ``usage`` counts
    the session's own responses, its ``modelUsage`` every request of the run. The difference is
    the sub-agents' only where its input counts are exactly those the sub-agents' messages
    record: the CLI also makes requests of its own (a title, a check of a command) that no
    message records, and then which output is whose is not known. Trusted, the output
    difference is one sub-agent's :attr:`~turnfold.model.SubAgent.usage` (with the input its
    messages record, their one-hour cache writes among them), or, of several,
    ``metadata["subagent_usage"]``: a total under no call, as which one spent what is not
    recorded. A resumed session's totals count its earlier runs too (``session_cost_usd``
    says so), as Qwen Code's usage does (``session_usage``): they give no difference to
    trust."""
    meta = transcript.metadata
    run = model_usage_totals(meta.get("model_usage"))
    own = meta.get("usage")
    resumed = "session_cost_usd" in meta or "session_usage" in meta
    agents = [(owner, call) for owner, call in calls_with_holders(transcript) if call.subagent]
    if run is None or not isinstance(own, Mapping) or resumed or not agents:
        return
    spent = {name: run[name] - own.get(name, 0) for name in run}
    counted = subagent_tokens(transcript.entries)
    output = spent.pop("output_tokens", 0)
    if output <= 0 or any(value != counted.get(name, 0) for name, value in spent.items()):
        return  # requests no message records, or totals that disagree: nothing to trust
    if len(agents) == 1:
        ((owner, call),) = agents
        agent = call.subagent
        assert agent is not None  # one of the calls with a sub-agent
        # The one-hour part is the messages' (the difference, where the totals give one, was
        # checked equal to it): None, not 0, where no write was kept for an hour, as a
        # message's usage reads (:func:`~turnfold.formats.anthropic_blocks.with_one_hour_writes`).
        spent.pop("cache_write_1h_tokens", None)
        hour = counted.get("cache_write_1h_tokens") or None
        usage = Usage(**{**spent, "output_tokens": output}, cache_write_1h_tokens=hour)
        owner.update(call, subagent=replace(agent, usage=usage, output_tokens=output))
    else:
        meta["subagent_usage"] = {"output_tokens": output}


def _message(
    source: Source, thread: _Thread, record: Mapping[str, Any], kind: str, line: int, *, qwen: bool
) -> None:
    message = record.get("message")
    if not isinstance(message, Mapping):
        source.warn(f"{kind} event without a message", line)
        return
    warnings = thread.transcript.warnings
    # Counted, not measured: past the listed ones a warning adds nothing to the list (a
    # follower's transcript holds its source's warnings).
    listed, before = len(warnings), warning_count(warnings)
    thread.builder.fed = []
    if kind == "assistant":
        thread.assistant(record, message, line, qwen=qwen)
    else:
        thread.response = None  # a response ends where the next user event begins
        thread.builder.synthetic = record.get("isSynthetic") is True
        try:
            thread.builder.feed(message, line)
        finally:
            thread.builder.synthetic = False
        if not qwen:
            _outcome(thread, record, message)
    uuid = record.get("uuid")
    what = f"{kind} event {uuid}" if isinstance(uuid, str) else f"{kind} event"
    stamp = warned_timestamp(record.get("timestamp"), checked_timestamp,
                             partial(thread.builder.warn, line=line), what,
                             name="timestamp")  # fmt: skip
    if stamp is not None:
        for entry in thread.builder.fed:
            if entry.timestamp is None:
                thread.transcript.update(entry, timestamp=stamp)
    if warning_count(warnings) == before:
        source.mapped(kind)
    elif len(warnings) == listed:  # counted past the listed ones, in the source's own list
        source.note(kind, "warned")
    else:
        source.take_warnings(warnings, line, start=listed, record_type=kind)


def _outcome(thread: _Thread, record: Mapping[str, Any], message: Mapping[str, Any]) -> None:
    """A call's outcome read as the session file reads it
    (:func:`~turnfold.formats.claude_code.tool_outcome`): the event's ``tool_use_result`` is the
    session line's ``toolUseResult`` (an edit's diff, a todo list, a sub-agent's report and
    duration), and a rejected or interrupted call is ``cancelled``. An event of several results
    has none (it describes one)."""
    content = message.get("content")
    if not isinstance(content, list):
        return
    results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    call_id = results[0].get("tool_use_id") if len(results) == 1 else None
    call = thread.builder._calls.get(call_id) if isinstance(call_id, str) else None
    if call is None or call.result is None or call.status not in ("success", "error"):
        return
    extra = record.get("tool_use_result")
    status, result = tool_outcome(call, call.status, call.result, record, extra,
                                  thread.builder.cwd)  # fmt: skip
    changes: dict[str, Any] = {"status": status, "result": result}
    duration = recorded_duration(extra) if isinstance(extra, Mapping) else None
    if duration is not None:
        changes["duration_ms"] = duration
    if isinstance(extra, Mapping) and status == "success":
        if launched_async(extra):
            # As the session file reads it: an agent launched in the background runs until
            # its task notification, which alone says how it ended.
            changes["status"] = "executing" if thread.builder.live else "unknown"
            changes["meta"] = {**call.meta, "background": True}
            thread.background[call.call_id] = "agent"
        elif isinstance(extra.get("backgroundTaskId"), str):
            thread.background[call.call_id] = "command"  # launched, its end still to come
    thread.transcript.update(call, **changes)


def _notification(record: Mapping[str, Any]) -> SystemNotice:
    """A notice the CLI showed (``Stop hook error occurred``), its ``key`` and ``priority``
    kept in ``meta``."""
    text = record.get("text")
    notice = SystemNotice(text=text if isinstance(text, str) else "", subtype="notification")
    for key in ("key", "priority"):
        if isinstance(record.get(key), str):
            notice.meta[key] = record[key]
    return notice


def _init(transcript: Transcript, record: Mapping[str, Any]) -> None:
    meta = transcript.metadata
    # Qwen Code prints the same events (``qwen -p --output-format stream-json``), its init
    # naming its own version.
    qwen = isinstance(record.get("qwen_code_version"), str)
    meta["agent"] = "qwen" if qwen else "claude-code"
    version = "qwen_code_version" if qwen else "claude_code_version"
    for key, name in (("session_id", "session_id"), ("model", "model"), ("cwd", "cwd"),
                      (version, "version")):  # fmt: skip
        value = record.get(key)
        if isinstance(value, str) and value:
            meta[name] = value


#: The input counts of an Anthropic ``usage``: a ``message_delta`` that gives them all gives
#: the response's final ones (:meth:`_Thread._final_output`).
_INPUT_COUNTS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _claude_usage(raw: Any) -> Usage | None:
    """A Claude Code message's usage: its input, cached input added in, and cache counts. Its
    ``output_tokens`` is ``message_start``'s, not the response's (see the module's notes).
    None for the empty usage of a server that sent none (:data:`_NO_USAGE`)."""
    if raw == _NO_USAGE:
        return None
    usage = usage_from(
        raw,
        cache_apart=True,
        input_tokens="input_tokens",
        cache_read_tokens="cache_read_input_tokens",
        cache_write_tokens="cache_creation_input_tokens",
    )
    return with_one_hour_writes(usage, raw)


def _qwen_usage(raw: Any) -> Usage | None:
    """A Qwen Code message's usage, whose input counts the cached tokens too; None for the
    CLI's empty default, which records nothing."""
    if raw == _NO_USAGE:
        return None
    return usage_from(
        raw,
        input_tokens="input_tokens",
        output_tokens="output_tokens",
        cache_read_tokens="cache_read_input_tokens",
    )


#: The counts of a ``result`` that are its own run's (the others are the process's so far).
_PER_RUN = ("duration_ms", "num_turns")


def _result(
    transcript: Transcript,
    record: Mapping[str, Any],
    totals: Tokens,
    costs: list[float | None],
    *,
    qwen: bool,
) -> bool:
    """The ``result`` into ``transcript``'s metadata, its usage added to ``totals``; True when
    its usage is no total (a run stopped before the CLI counted its responses)."""
    meta = transcript.metadata
    subtype = record.get("subtype")
    aborted = record.get("terminal_reason") in _ABORTED
    stopped = subtype == "error_max_turns" or aborted  # the run was cut short, not broken
    failed = not stopped and (
        record.get("is_error") is True or (isinstance(subtype, str) and subtype.startswith("error"))
    )
    if failed:
        meta["outcome"] = "error"
    elif aborted:
        meta["outcome"] = "incomplete"
    elif isinstance(subtype, str) and subtype in _OUTCOMES:
        meta["outcome"] = _OUTCOMES[subtype]
    raw = record.get("usage")
    # A run the user stopped before the CLI counted any of its responses (the SIGINT landed
    # while the first was still streaming, before its message_delta): the result's usage is
    # the CLI's sum over no response, zeros, and its cost too when no model had been counted.
    # Its responses' own counts stand instead (their input on their messages).
    uncounted = aborted and not any(counts_of(usage_of(raw)).values())
    cost = record.get("total_cost_usd")
    if uncounted and cost == 0:
        cost = None
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        meta["cost_usd"] = cost
        costs.append(_cost_since_last(record.get("model_usage_since_last_result")))
        if all(c is not None for c in costs):
            own = math.fsum(c for c in costs if c is not None)
            if not math.isclose(own, cost, rel_tol=1e-9, abs_tol=1e-12):
                # A resumed session's process: its total counts the earlier runs too.
                meta["cost_usd"], meta["session_cost_usd"] = own, cost
    for key in ("duration_ms", "duration_api_ms", "num_turns"):
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # A stream of several runs (a background agent's notification starts another)
            # gives each run's own duration and turns, which add up; its API time and cost
            # are the process's so far, as its last result gives them.
            before = meta.get(key) if key in _PER_RUN else None
            meta[key] = value + before if isinstance(before, (int, float)) else value
    # Qwen Code's total is the session's so far (a resume replays the earlier runs' counts
    # into it), its sub-agents' requests included: not this run's own total.
    if qwen:
        if (usage := _qwen_usage(raw)) is not None:
            meta["session_usage"] = counts_of(usage)  # in turnfold's names, as codex exec's
    elif (usage := usage_of(raw)) is not None and not uncounted:
        add_into(totals, counts_of(usage))
        meta["usage"] = dict(totals)
    model_usage = record.get("modelUsage")
    if isinstance(model_usage, Mapping) and model_usage:
        meta["model_usage"] = dict(model_usage)
    if isinstance(record.get("session_id"), str):
        meta.setdefault("session_id", record["session_id"])
    entries = transcript.entries
    last = entries[-1] if entries else None
    if aborted:
        if not isinstance(last, AbortMarker):  # the CLI's [Request interrupted…] says it already
            transcript.append(stop("reader.interrupted_by_user"))
    elif failed or stopped:
        errors = record.get("errors")
        text = record.get("result")
        if isinstance(errors, list) and errors:
            text = "\n".join(str(e) for e in errors)
        if isinstance(text, str) and text:
            error = AssistantError(message=text)
        else:
            error = failure("reader.run_ended", {"subtype": subtype})
        # A failed API request's result repeats the message the CLI wrote for it just before
        # (``API Error: 400 …``), already an error of the run: one error, not two.
        if not (isinstance(last, AssistantError) and last.message.strip() == error.message.strip()):
            transcript.append(error)
    return uncounted and not qwen


def _cost_since_last(model_usage: Any) -> float | None:
    """The cost of a ``result``'s own requests: its ``model_usage_since_last_result`` (Claude
    Code 2.1.3xx), each model's ``costUSD``, added up; None where a model has none."""
    if not isinstance(model_usage, Mapping) or not model_usage:
        return None
    found = [m.get("costUSD") if isinstance(m, Mapping) else None for m in model_usage.values()]
    costs = [c for c in found if isinstance(c, (int, float)) and not isinstance(c, bool)]
    return math.fsum(costs) if len(costs) == len(found) else None


def _nest(threads: dict[str | None, _Thread], source: Source) -> None:
    """Each sub-agent's transcript under the call with its parent tool use id."""
    owners: dict[str, tuple[_Thread, ToolCall]] = {}
    for thread in threads.values():
        owners.update({key: (thread, call) for key, call in thread.builder._calls.items()})
    for key, thread in threads.items():
        if key is None:
            continue
        found = owners.get(key)
        if found is None:
            source.warn(f"sub-agent events for an unknown tool use {key!r} kept at the end")
            threads[None].transcript.append(
                ToolCall(call_id=key, name="Task", status="unknown", subagent=_sub(thread, None))
            )
            continue
        owner, call = found
        owner.transcript.update(call, subagent=_sub(thread, call))


def _sub(thread: _Thread, call: ToolCall | None) -> SubAgent:
    args = call.args if call is not None and isinstance(call.args, Mapping) else {}
    name = args.get("subagent_type")
    # The call's short description names the task, as the session file's sub-agent line does
    # (and the CLI's own: ``Agent(scripted sub-agent)``); the prompt stays the child's first
    # message. Without one, the prompt: the child's first message, or, for a background agent
    # (whose events start without it), the call's own input.
    task = args.get("description") if isinstance(args.get("description"), str) else None
    if not task:
        task = next((e.text for e in thread.transcript.entries if isinstance(e, UserMessage)), None)
    if task is None and isinstance(args.get("prompt"), str):
        task = args["prompt"]
    return SubAgent(
        name=name if isinstance(name, str) else None,
        task=task,
        transcript=thread.transcript,
        tool_count=len(thread.transcript.tool_calls()),
        # A foreground agent's call lasts its whole run (``totalDurationMs``, :func:`_outcome`);
        # a background one's is timed by its task events (:meth:`StreamReader._time`).
        duration_ms=call.duration_ms if call is not None else None,
    )


# --- tasks' durations and outcomes (spec F-7) -----------------------------------------------

#: The events that time a task's run (a sub-agent's, a background command's) and say how it
#: ended (:class:`_Task`).
_TASK_EVENTS = NameSet(
    {
        "system/task_started",
        "system/task_updated",
        "system/task_notification",
        "system/background_tasks_changed",
    }
)


@dataclass
class _Task:
    """What the task events record of one background task's run (a sub-agent's, a command's):
    its call, the duration the CLI measured (``task_notification``'s ``usage.duration_ms``, a
    command's ``duration_ms``), its start and end (ISO 8601), and how it ended (the
    notification's ``status``, with its ``summary``)."""

    call_id: str | None = None
    duration_ms: float | None = None
    start: str | None = None
    end: str | None = None
    #: The duration last put on its call (:meth:`StreamReader._time`).
    timed: float | None = None
    status: ToolStatus | None = None
    summary: str | None = None
    #: An agent's report, when the notification says its summary is one.
    report: str | None = None
    #: Whether its outcome is on its call (:meth:`StreamReader._settle`).
    settled: bool = False

    def duration(self) -> float | None:
        """The recorded duration, else the span from start to end; None when neither is
        recorded (L-3)."""
        return self.duration_ms if self.duration_ms is not None else span_ms(self.start, self.end)


def _milliseconds(value: Any) -> float | None:
    """``value`` as a duration: a finite number, not negative; else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None
