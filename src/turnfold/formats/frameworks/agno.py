"""Agno agents and teams (``agno`` 3.x, formerly phidata) after the run and live (spec A-1,
A-2, A-3).

``Agent.run()`` returns a ``RunOutput`` (``agno.run.agent``), ``Team.run()`` a
``TeamRunOutput`` (``agno.run.team``). Each holds the run's ``messages`` (``agno.models.message
.Message``: ``role`` system / user / assistant / tool, ``content``, ``reasoning_content``,
``tool_calls`` in OpenAI's shape, a tool message's ``tool_call_id`` and ``tool_call_error``,
an assistant message's ``metrics``, ``created_at`` in epoch seconds), its ``tools``
(``ToolExecution``: each call's ``result``, ``tool_call_error``, timing ``metrics`` and, for a
team's delegation, ``child_run_id``), ``model``, ``status`` and run-level ``metrics``; a team's
also its ``member_responses``, the members' own runs.

Input shapes:

- a run saved with ``to_dict()`` / ``to_json()`` (``{"run_id", "agent_id" | "team_id",
  "messages", "tools", "metrics", "status", ...}``), or a list of them;
- a session (``AgentSession`` / ``TeamSession.to_dict()``: ``{"session_id", "runs": [...]}``,
  as Agno's databases store it and its ``JsonDb`` writes it: a list of sessions), its runs in
  order; a member's run stored beside its team's run (``parent_run_id``) is read nested in it;
- the messages alone (``[m.to_dict() for m in run.messages]``), as a list or one a line;
- objects, by their type (:func:`plain`): a ``RunOutput``, a ``TeamRunOutput``, a session, a
  list of ``Message``; each read by attribute into the dicts ``to_dict()`` makes, never
  modified.

Detection: ``Message.to_dict()`` always writes ``from_history`` and ``stop_after_tool_call``
beside ``role``, which no other format writes; a run is marked by its ``run_id`` beside its
messages, a session by its ``session_id`` beside its runs.

Mapping:

- ``system`` → ``metadata["system"]``; ``user`` → :class:`UserMessage` (its text; images,
  audio, videos and files it carries as attachment lines); a message ``from_history`` (an
  earlier run's, which ``add_history_to_context`` repeats) is left out: that run holds it;
- ``assistant``, in order: ``reasoning_content`` → :class:`Thinking`
  (``redacted_reasoning_content`` → ``redacted``), ``content`` → :class:`AssistantText` with
  the run's ``model``, each of ``tool_calls`` → :class:`ToolCall` (``id`` verbatim, its
  ``function.arguments`` parsed); the calls of one message are one batch, the message's
  ``id``. Its ``metrics`` (``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
  ``cache_write_tokens``, ``reasoning_tokens``; Agno leaves out zeros) are the response's
  :class:`Usage`, counted once; ``created_at`` is the timestamp of its entries;
- ``tool`` settles the call of its ``tool_call_id`` by Agno's own signal, ``tool_call_error``:
  true → ``error`` (a tool that raised: its result is the exception's text; an unknown tool, a
  call past the tool call limit), false → ``success``, missing → ``unknown`` (L-3); the call's
  ``ToolExecution`` gives its ``started_at``, ``ended_at`` and ``duration_ms`` (its timer's);
  without it the call has no end: a result's ``created_at`` is a whole second, no call's end;
- a team's delegation call (``delegate_task_to_member`` / ``delegate_task_to_members``, or any
  call whose ``ToolExecution.child_run_id`` names a member run) is a :class:`SubAgent` whose
  transcript is the member's run (a member team's runs nest further): by ``child_run_id``
  where Agno set it (streamed runs), else the next member run of the named member, in order;
  a member run no call is found for is read after the team's messages, with a warning;
- the run's ``status`` (Agno's ``RunStatus``, written upper case): ``error`` → an
  :class:`AssistantError` of its content (Agno puts the exception's text there),
  ``cancelled`` → an :class:`AbortMarker`, ``paused`` → each call waiting on the user
  (``requires_confirmation``: ``confirming`` with a ``permission`` :class:`PendingAction`;
  ``requires_user_input`` / ``external_execution_required``: ``pending`` with a
  ``question``), ``regenerated`` (a run a later one was regenerated from, in a session) marks
  its entries rejected (shown muted, labelled); ``model``, ``model_provider``, ``run_id``,
  ``session_id``, the agent's or team's name and the run's ``metrics`` go to ``metadata``
  (a session's: its runs' token counts added up, and each system prompt once, though every
  run repeats it).

Durations: Agno stamps its messages' ``created_at`` in whole seconds (``int(time())``), so
their span says 0 or 1 s of a run of 0.3 s. The run's own timer, ``metrics.duration``, is its
turn's duration (``meta["turn_duration_ms"]`` of the run's last entry) and, for a transcript of
one run, ``duration_ms``; a call's is its ``ToolExecution``'s timer.

What the runs do not record: no duration of a model response (a message's ``metrics``
``duration`` is kept in ``meta``), nothing of a ``reasoning=True`` agent's reasoning steps but
the run's ``reasoning_content`` (kept in ``metadata``; a model's own reasoning is on its
messages), and no agent used as a tool (``Agent.as_tool()`` publishes an agent to other
surfaces, not to an agent's ``tools``): a team's members are Agno's sub-agents.

Live (A-2): ``agent.run(..., stream=True, stream_events=True)`` (and ``arun``, and a team's)
yields events: ``RunContent`` grows the reasoning (``reasoning_content``) and the text
(``content``) of the response ``ModelRequestStarted`` began (its ``created_at`` the response's
timestamp, as its message's), ``ModelRequestCompleted`` gives its usage (a zero no count, as
the message's metrics leave it out), ``ToolCallStarted`` shows a call ``executing``,
``ToolCallCompleted`` settles it by ``tool_call_error`` (``ToolCallError`` follows for a failed
one); a call no event announces (one past ``tool_call_limit``, refused without running) is
shown, settled, when the next response starts, from the messages the run's generator holds;
``RunError`` / ``RunCancelled`` / ``RunPaused`` end the run as a load of it does. In a team's
stream the members' own events (an agent's, with the team's run as ``parent_run_id``)
are followed into the transcript of the delegation call that runs them. The events carry no
prompt and no message ids: ``follow`` given the generator ``run(stream=True)`` returns reads
the run Agno is building (the generator's ``run_response``) through :func:`run_of_generator`,
so the prompt is shown first and, when the stream ends, the run's messages settle every entry
in place (ids, timestamps, usage, batches), so ``.transcript`` equals ``load()`` of the final
run. A ``RunOutput`` yielded at the end (``yield_run_output=True``) settles it the same way
when the generator's run is not at hand; with neither, the followed run is what its events
said, without the prompt, and a warning says so. An event of a kind not shown (memory, hooks,
compression…) is said in a warning, once per kind.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    MessageBuilder,
    NameSet,
    approval_text,
    as_list,
    as_text,
    counted_usage,
    describe_args,
    epoch_iso,
    mark_rejected,
    parse_arguments,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.frameworks import generator_arguments
from turnfold.formats.protocol import not_read
from turnfold.formats.source import Source, plain_each, plain_value, warning_count
from turnfold.formats.wording import failure, stop
from turnfold.formats.wrappers import listed_evidence, sample
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    SubAgent,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    UserMessage,
    maker,
)
from turnfold.usage import add_into, attach_usage, counts_of

NAME = "agno"

_ROLES = NameSet({"system", "developer", "user", "assistant", "tool"})
#: The names of a team's delegation tools (``agno/team/_default_tools.py``).
DELEGATIONS = NameSet({"delegate_task_to_member", "delegate_task_to_members"})
#: A run's keys read into the transcript (besides ``messages``), with what they become.
_RUN_KEYS = NameSet(
    {"tools", "member_responses", "model", "model_provider", "status", "metrics", "run_id",
     "session_id", "agent_name", "team_name", "agent_id", "team_id", "reasoning_content"}
)  # fmt: skip
#: A run's keys that repeat what its messages hold, or that hold no step of the conversation.
_RUN_REPEATS = NameSet({"content", "content_type", "input", "created_at", "events"})
#: The media keys of a message, shown as attachment lines.
_MEDIA = ("images", "audio", "videos", "files")


# --- detection --------------------------------------------------------------------------------


def _classify(value: Any) -> int:
    """A ``Message.to_dict()`` (``from_history`` and ``stop_after_tool_call`` beside
    ``role``), a run (``run_id`` beside such ``messages``) or a session (``session_id`` beside
    such ``runs``)."""
    if not isinstance(value, MAPPINGS):
        return NOT_MINE
    if "role" in value:
        owned = "from_history" in value and "stop_after_tool_call" in value
        return DISTINCTIVE if owned and value["role"] in _ROLES else NOT_MINE
    # A run or a session is Agno's when its first message (its first run's) is: other
    # frameworks' runs have a run id and messages too (pydantic-ai's).
    messages = value.get("messages")
    if "run_id" in value and isinstance(messages, list):
        return _classify(messages[0]) if messages else NOT_MINE
    runs = value.get("runs")
    if "session_id" in value and isinstance(runs, list):
        return _classify(runs[0]) if runs else NOT_MINE
    return NOT_MINE


_LACKS = "no Agno message (role with from_history), run (run_id, messages) or session"


def detect(source: Source) -> Evidence:
    """Agno's messages, runs or sessions: a list of them, one a line, or one document."""
    listed = listed_evidence(source, _classify, _LACKS)
    if listed is not None:
        return listed
    document = source.document
    if _classify(document) == NOT_MINE:
        return Evidence.none(_LACKS)
    # A run (a session's first run) is weighed by its messages, as the formats that read any
    # document of messages weigh it (OpenAI's chat messages are Agno's too).
    runs = document.get("runs")
    run = runs[0] if isinstance(runs, list) and "messages" not in document else document
    return Evidence.of(sample(run["messages"]), _classify, _LACKS)


# --- reading ----------------------------------------------------------------------------------

_new_call = maker(ToolCall, "call_id", "name", "args", "description", "status", "batch_id")
_new_text = maker(AssistantText, "text")
_new_thinking = maker(Thinking, "text")


def _usage(metrics: Any) -> Any:
    """An assistant message's ``metrics`` as its response's :class:`Usage`."""
    if not isinstance(metrics, MAPPINGS):
        return None
    get = metrics.get
    return counted_usage(
        get("input_tokens"),
        get("output_tokens"),
        get("cache_read_tokens"),
        get("cache_write_tokens"),
        get("reasoning_tokens"),
    )


def _text(content: Any) -> str | None:
    """A message's content as text: a string, text parts joined, anything else as JSON."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") if isinstance(p, MAPPINGS) else p for p in content]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    return stringify(content)


def _media_lines(message: Mapping[str, Any]) -> list[str]:
    """The media a message carries (``images``, ``audio``…) as attachment lines."""
    lines: list[str] = []
    for key in _MEDIA:
        for item in as_list(message.get(key)):
            item = item if isinstance(item, MAPPINGS) else {}
            named = [key[:-1] if key.endswith("s") else key]
            for field in ("url", "filepath", "filename", "mime_type", "format"):
                value = item.get(field)
                if isinstance(value, str) and value:
                    named.append(value)
                    break
            lines.append(f"[attachment: {' · '.join(named)}]")
    return lines


def _seconds(value: Any) -> str | None:
    """Agno's times (epoch seconds, an int or a float) as ISO 8601."""
    if isinstance(value, float):
        return epoch_iso(value, timespec="milliseconds")
    return epoch_iso(value)


def _with_members(runs: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """A session's runs, each with the runs of its members stored beside it in its
    ``member_responses``. Agno 3's databases keep a team's run with its ``member_responses``
    empty and each member's run a run of the session of its own, its ``parent_run_id`` the
    team's run (``agno_runs`` rows; ``get_session`` returns them so): added to it here, in the
    session's order, a member team's own members to that team's run; a run already there is
    not added twice. The runs are not changed (a run given members is a copy), and a run whose
    parents never reach a run of no parent (a cycle) stays a run of its own."""
    ids = {run.get("run_id") for run in runs} - {None}
    members: dict[Any, list[Mapping[str, Any]]] = {}
    roots = []
    for run in runs:
        parent = run.get("parent_run_id")
        if parent in ids and parent != run.get("run_id"):
            members.setdefault(parent, []).append(run)
        else:
            roots.append(run)
    if not members:
        return runs
    reached: set[Any] = set()

    def nested(run: Mapping[str, Any]) -> Mapping[str, Any]:
        stored = as_list(run.get("member_responses"))
        there = {m.get("run_id") for m in stored if isinstance(m, MAPPINGS)}
        own = [m for m in members.get(run.get("run_id"), ()) if m.get("run_id") not in reached]
        reached.update(m.get("run_id") for m in own)
        added = [nested(m) for m in own if m.get("run_id") not in there]
        return {**run, "member_responses": [*stored, *added]} if added else run

    read = {id(run): nested(run) for run in roots}
    return [read.get(id(run), run) for run in runs]


def outcome(error: Any) -> ToolStatus:
    """A call's status by Agno's own signal, ``tool_call_error``: true is an error (the tool
    raised), false a success; missing, no outcome is recorded (L-3)."""
    return "error" if error is True else "success" if error is False else "unknown"


def _member_names(run: Mapping[str, Any]) -> set[str]:
    """What a member run answers to in a delegation's ``member_id``: its agent's (or team's)
    id, and its name as Agno makes a member id of it (``url_safe_string``)."""
    names = set()
    for key in ("agent_id", "team_id", "agent_name", "team_name"):
        value = run.get(key)
        if isinstance(value, str) and value:
            names.add(value)
            names.add(value.strip().lower().replace(" ", "-"))
    return names


class AgnoBuilder(MessageBuilder):
    """Builds a transcript from Agno's runs and messages (a load, or the end of a followed run
    settling what its events showed: ``shown`` are those entries, in order, written over in
    place; ``children`` the followers of its members' runs, by delegation call id)."""

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<messages>",
        *,
        source: Source | None = None,
        live: bool = False,
        shown: list[Entry] | None = None,
        children: Mapping[str, Follower] | None = None,
        skip_prompt: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, live=live)
        self._skip_prompt = skip_prompt
        self.source = source
        self.recognized = 0
        self.model: str | None = None
        self._shown = shown if shown is not None else []
        self._next_shown = 0  # the first of them not written over yet
        #: The last entry the run being read placed (appended, or written over a shown one).
        self._placed: Entry | None = None
        self._stamps: dict[Any, str | None] = {}
        self._children = children if children is not None else {}
        self._executions: dict[str, Mapping[str, Any]] = {}
        self._members: list[Mapping[str, Any]] = []
        self._runs: dict[str, Mapping[str, Any]] = {}
        #: How many runs' ``metrics`` ``metadata["usage"]`` holds.
        self._metered = 0
        #: The system prompts read (each run of a session repeats its agent's).
        self._systems: set[str] = set()

    # --- accounting ---------------------------------------------------------------------------

    def _note(self, record_type: str, disposition: Any = "mapped") -> None:
        if self.source is not None:
            self.source.note(record_type, disposition)

    # --- documents ----------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        self.feed_message(message, line)

    def read_value(self, value: Any) -> None:
        """A document: a run, a session, or a list of messages, runs or sessions."""
        if isinstance(value, list):
            for line, item in enumerate(value, start=1):
                self._read_item(item, line)
        elif isinstance(value, MAPPINGS):
            self._read_item(value, 1)
        else:
            self.warn("not an Agno run, session or message", None)

    def _read_item(self, item: Any, line: int) -> None:
        try:
            if isinstance(item, MAPPINGS) and "role" not in item:
                if isinstance(item.get("runs"), list):
                    self.read_session(item)
                    return
                if isinstance(item.get("messages"), list):
                    self.read_run(item)
                    self._note("run")
                    return
            self.feed_noted_message(item, line)
        except Exception as exc:  # a shape never seen: that record is lost, not the load
            if self.source is None:
                raise
            not_read(self.source, line, exc)

    def feed_noted_message(self, message: Any, line: int) -> None:
        """Feed one message and account for it: ``warned`` when feeding it warned, an earlier
        run's message ``ignored``, else ``mapped``."""
        before = warning_count(self.transcript.warnings)
        kind = self.feed_message(message, line)
        if warning_count(self.transcript.warnings) > before:
            self._note(kind, "warned")
        else:
            self._note(kind, "ignored" if kind == "from_history" else "mapped")

    def read_session(self, session: Mapping[str, Any]) -> None:
        """A session's runs in order; a member's run stored beside its team's is read nested in
        that team's run, not again on its own."""
        runs = [run for run in session["runs"] if isinstance(run, MAPPINGS)]
        held = _with_members(runs)
        nested = {
            member.get("run_id")
            for run in held
            for member in as_list(run.get("member_responses"))
            if isinstance(member, MAPPINGS)
        }
        for key in ("session_id", "agent_id", "team_id", "user_id"):
            value = session.get(key)
            if isinstance(value, str) and value:
                self.transcript.metadata.setdefault(key, value)
        for run in held:
            if run.get("run_id") in nested:
                self._note("member run", "ignored")
                continue
            self.read_run(run)
            self._note("run")
        if len(runs) < len(session["runs"]):
            self.warn(f"{len(session['runs']) - len(runs)} run(s) of the session not read", None)
        self._note("session")

    def read_run(self, run: Mapping[str, Any]) -> None:
        """One run: its messages, its calls' executions, its members' runs and its status."""
        metadata = self.transcript.metadata
        model = run.get("model")
        self.model = model if isinstance(model, str) and model else None
        if self.model is not None:
            metadata["model"] = self.model
        for key in ("model_provider", "run_id", "session_id"):
            value = run.get(key)
            if isinstance(value, str) and value:
                metadata[key] = value
        name = run.get("agent_name") or run.get("team_name")
        if isinstance(name, str) and name:
            metadata["agent"] = name
        if isinstance(run.get("metrics"), MAPPINGS):
            if self._metered:  # a session's runs: the usage is all of theirs, not the last's
                total = counts_of(metadata["usage"])
                add_into(total, counts_of(run["metrics"]))
                metadata["usage"] = total
            else:
                metadata["usage"] = dict(run["metrics"])
            self._metered += 1
        reasoning = as_text(run.get("reasoning_content"))
        if reasoning is not None and run.get("reasoning_steps"):
            metadata["reasoning"] = reasoning
        self._executions = {
            t["tool_call_id"]: t
            for t in as_list(run.get("tools"))
            if isinstance(t, MAPPINGS) and isinstance(t.get("tool_call_id"), str)
        }
        self._members = [m for m in as_list(run.get("member_responses")) if isinstance(m, MAPPINGS)]
        self._runs = {m["run_id"]: m for m in self._members if isinstance(m.get("run_id"), str)}
        self._calls = {}  # a result settles a call of its own run
        self._placed = None
        since = len(self.transcript.entries)
        for line, message in enumerate(as_list(run.get("messages")), start=1):
            try:
                self.feed_noted_message(message, line)
            except Exception as exc:  # a shape never seen: that message is lost, not the run
                if self.source is None:
                    raise
                not_read(self.source, line, exc)
        for member in self._members:  # a member's run no call was found for
            self.warn(f"member run {member.get('run_id')!r} of no delegation call", None)
            self._nest(None, [member])
        self._end_run(run, list(self._calls.values()))
        self._duration(run)
        if str(run.get("status")).lower() == "regenerated":
            mark_rejected(self.transcript, since)  # replaced by the run regenerated from it

    def _duration(self, run: Mapping[str, Any]) -> None:
        """The run's own duration (``metrics.duration``, Agno's timer, in seconds) as its
        turn's (``meta["turn_duration_ms"]`` of its last entry) and, for a transcript of one
        run, the transcript's (``duration_ms``): its messages' ``created_at`` are whole seconds,
        whose span says 0 or 1 s of a run of 0.3 s (or, beside a call's timing, up to a second
        more than it took)."""
        metrics = run.get("metrics")
        duration = metrics.get("duration") if isinstance(metrics, MAPPINGS) else None
        if isinstance(duration, bool) or not isinstance(duration, (int, float)) or duration < 0:
            return
        last = self._placed
        if last is not None:
            self._change(last, {"meta": {**last.meta, "turn_duration_ms": duration * 1000}})
        if self._metered > 1:  # a session: its span runs from its first run to its last
            self.transcript.metadata.pop("duration_ms", None)
        else:
            self.transcript.metadata["duration_ms"] = duration * 1000

    def _end_run(self, run: Mapping[str, Any], calls: list[ToolCall]) -> None:
        status = run.get("status")
        status = str(getattr(status, "value", status)).lower()
        if status == "error":
            text = as_text(_text(run.get("content")))
            self._append(AssistantError(message=text) if text else failure("reader.run_failed"))
        elif status == "cancelled":
            self._append(stop("reader.cancelled"))
        elif status == "paused":
            self._paused(run)
        if not self.live:
            self.settle_open(calls)

    def _paused(self, run: Mapping[str, Any]) -> None:
        """A paused run's calls waiting on the user (Agno's human-in-the-loop)."""
        for tool in as_list(run.get("tools")):
            if not isinstance(tool, MAPPINGS):
                continue
            call = self._calls.get(tool.get("tool_call_id"))  # type: ignore[arg-type]
            name = tool.get("tool_name")
            if tool.get("requires_confirmation") and tool.get("confirmed") is None:
                action = self.wait_on_user(call, "permission", approval_text(name))
            elif (tool.get("requires_user_input") and not tool.get("answered")) or (
                tool.get("external_execution_required") and tool.get("result") is None
            ):
                text = f"{name}: waiting for input" if isinstance(name, str) else "Waiting"
                action = self.wait_on_user(call, "question", text, status="pending")
            else:
                continue
            self._append(action)

    # --- messages -----------------------------------------------------------------------------

    def feed_message(self, message: Any, line: int) -> str:
        """Add one message; its record type for accounting."""
        if not isinstance(message, MAPPINGS):
            reason = message.reason if isinstance(message, MalformedLine) else "not a message"
            self.warn(reason, line)
            return "other"
        role = message.get("role")
        if role not in _ROLES:
            self.warn(f"not an Agno message (role {role!r})", line)
            return "other"
        self.recognized += 1
        if message.get("from_history"):
            return "from_history"
        named = as_text(message.get("id"))
        what = f"message {named[:80]}" if named else f"a {role} message"
        stamp = self.stamp(message.get("created_at"), what, line)
        if role == "assistant":
            self._assistant(message, stamp, line)
        elif role == "tool":
            self._result(message, line)
        else:
            text = _text(message.get("content")) or ""
            lines = _media_lines(message)
            if lines:
                text = "\n".join([text, *lines]) if text else "\n".join(lines)
            if role == "user" and self._skip_prompt:
                self._skip_prompt = False  # a followed run's prompt its events did not show
            elif role == "user":
                entry = UserMessage(text=text)
                entry.timestamp = stamp
                self._append(entry)
            elif text and text not in self._systems:
                self._systems.add(text)
                system = self.transcript.metadata.get("system")
                self.transcript.metadata["system"] = f"{system}\n\n{text}" if system else text
        return str(role)

    def stamp(self, created: Any, what: str = "an event", line: int | None = None) -> str | None:
        """A message's (or an event's) ``created_at`` as its entries' timestamp; one that is
        no time is left out, said once of the first message (``what``) that holds it."""
        # A value of JSON's that is no key (a list) is no time either: never kept.
        held = created is None or isinstance(created, (int, float, str))
        stamp = self._stamps.get(created, "") if held else ""
        if stamp == "":  # many messages of a run are made in the same second
            stamp = warned_timestamp(
                created, _seconds, lambda reason: self.warn(reason, line), what,
                name="created_at", unit="seconds since the epoch",
            )  # fmt: skip
            if held:
                self._stamps[created] = stamp
        return stamp

    def _assistant(self, message: Mapping[str, Any], stamp: str | None, line: int) -> None:
        entries: list[Entry] = []
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            entries.append(_new_thinking(reasoning))
        redacted = message.get("redacted_reasoning_content")
        if isinstance(redacted, str) and redacted:
            entries.append(Thinking(form="redacted", data=redacted))
        text = _text(message.get("content"))
        if text:
            made = _new_text(text)
            made.model = self.model
            entries.append(made)
        batch = message.get("id")
        batch = batch if isinstance(batch, str) and batch else f"msg-{line}"
        for raw in as_list(message.get("tool_calls")):
            call = self._call(raw, batch, line)
            if call is not None:
                entries.append(call)
        metrics = message.get("metrics")
        attach_usage(entries, _usage(metrics), model=self.model)
        duration = metrics.get("duration") if isinstance(metrics, MAPPINGS) else None
        for entry in entries:
            entry.timestamp = stamp
        if duration is not None and entries:
            entries[0].meta = {**entries[0].meta, "duration_s": duration}
        for entry in entries:
            self._append(entry)

    def _call(self, raw: Any, batch: str, line: int) -> ToolCall | None:
        function = raw.get("function") if isinstance(raw, MAPPINGS) else None
        if not isinstance(function, MAPPINGS):
            self.warn("a tool call without its function", line)
            return None
        call_id = raw.get("id")
        call_id = call_id if isinstance(call_id, str) else ""
        if call_id and call_id in self._calls:
            self.warn(f"duplicate tool call id {call_id!r} skipped", line)
            return None
        name = function.get("name")
        name = name if isinstance(name, str) and name else "tool"
        arguments = function.get("arguments")
        args = parse_arguments(arguments) if isinstance(arguments, str) else plain_value(arguments)
        call = _new_call(call_id, name, args, describe_args(name, args), self.open_status, batch)
        execution = self._executions.get(call_id)
        if execution is not None:
            timing = execution.get("metrics")
            if isinstance(timing, MAPPINGS):
                call.started_at = _seconds(timing.get("start_time"))
                call.ended_at = _seconds(timing.get("end_time"))
                duration = timing.get("duration")
                if isinstance(duration, (int, float)) and not isinstance(duration, bool):
                    call.duration_ms = duration * 1000
        if call_id:
            self._calls[call_id] = call
        return call

    def _result(self, message: Mapping[str, Any], line: int) -> None:
        call_id = message.get("tool_call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"a tool result for no call ({call_id!r})", line)
            return
        status = outcome(message.get("tool_call_error"))
        text = _text(message.get("content"))
        lines = _media_lines(message)
        if lines:
            text = "\n".join([text, *lines]) if text else "\n".join(lines)
        # No ``ended_at`` from the result's ``created_at``: a whole second (Agno stamps
        # ``int(time())``), which would give the call a duration of 0 or 1 s it never had;
        # its ToolExecution's timing, when there is one, is the call's time.
        changes: dict[str, Any] = {"status": status, "result": text_result(text)}
        subagent = self._subagent(call)
        if subagent is not None:
            changes["subagent"] = subagent
        self._change(call, changes)

    # --- members (a team's sub-agents) --------------------------------------------------------

    def _subagent(self, call: ToolCall) -> SubAgent | None:
        execution = self._executions.get(call.call_id) or {}
        child = execution.get("child_run_id")
        runs: list[Mapping[str, Any]] = []
        if isinstance(child, str) and child in self._runs:
            runs = [self._runs[child]]
        elif call.name in DELEGATIONS and self._members:
            wanted = call.args.get("member_id") if isinstance(call.args, MAPPINGS) else None
            if isinstance(wanted, str):
                runs = [m for m in self._members if wanted in _member_names(m)][:1]
            else:  # delegate_task_to_members: every member ran the task
                runs = list(self._members)
        if not runs:
            return None
        task = call.args.get("task") if isinstance(call.args, MAPPINGS) else None
        return self._nest(call, runs, task if isinstance(task, str) else None)

    def _nest(
        self, call: ToolCall | None, runs: list[Mapping[str, Any]], task: str | None = None
    ) -> SubAgent:
        """The member ``runs`` as the transcript of ``call``'s :class:`SubAgent` (appended as
        one of no call's when ``call`` is None)."""
        for run in runs:
            self._members.remove(run)
        follower = self._children.get(call.call_id) if call is not None else None
        child = AgnoBuilder(
            follower.transcript if follower is not None else Transcript(),
            self.source_name,
            live=self.live,
            shown=follower.shown if follower is not None else None,
            children=follower.children if follower is not None else None,
        )
        child.transcript.metadata.setdefault("source_format", NAME)
        for run in runs:
            child.read_run(run)
        first = runs[0]
        name = first.get("agent_name") or first.get("team_name")
        agent_id = first.get("agent_id") or first.get("team_id")
        sub = SubAgent(
            name=name if isinstance(name, str) else None,
            task=task,
            transcript=child.transcript,
            agent_id=agent_id if isinstance(agent_id, str) else None,
            tool_count=len(child.transcript.tool_calls()),
        )
        if call is None:
            orphan = _new_call("", "member", None, None, "unknown", None)
            orphan.subagent = sub
            self._append(orphan)
        return sub

    # --- placing entries ----------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        """``entry`` appended, or written over the entry of its kind a live view showed for it
        (the next one, in order), which keeps its id."""
        shown, kind = self._shown, type(entry)
        for index in range(self._next_shown, len(shown)):
            if type(shown[index]) is kind:
                self._next_shown = index + 1
                self._placed = self._write_over(shown[index], entry)
                return self._placed
        self._placed = self.transcript.append(entry)
        return self._placed

    def _write_over(self, target: Entry, entry: Entry) -> Entry:
        """``target`` given ``entry``'s fields; only those that differ, so a live view hears
        of what the run's messages added (ids, timestamps, usage), not of every field."""
        if isinstance(entry, ToolCall) and self._calls.get(entry.call_id) is entry:
            self._calls[entry.call_id] = target  # type: ignore[assignment]
            # Its outcome is its result message's to give (next), not a call's made open.
            names, values = _written(ToolCall, True)
        else:
            names, values = _written(type(entry), False)
        # Both entries' fields as two tuples, compared at once (in C), and only then one by
        # one: most fields the events set right already (issue 22: a followed run's end).
        new, old = values(entry), values(target)
        if new != old:
            self.update(target, **{n: v for n, v, o in zip(names, new, old, strict=True) if v != o})
        return target

    def _change(self, entry: Entry, changes: dict[str, Any]) -> None:
        """:meth:`update` ``entry`` with those of ``changes`` that change it."""
        changed = {k: v for k, v in changes.items() if v != getattr(entry, k)}
        if changed:
            self.update(entry, **changed)


#: What a call made from its message holds before its result: its outcome is not among them.
_OUTCOME = frozenset({"status", "result", "subagent"})
#: Field names, and the getter of their values as one tuple.
_Written = tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]
_WRITTEN: dict[tuple[type, bool], _Written] = {}


def _written(kind: type, call_made: bool) -> _Written:
    """The fields a shown entry of ``kind`` is written over with (all but its ``id``; but a
    call's outcome when ``call_made`` from its message), and a getter of their values as one
    tuple (``attrgetter`` of two names or more gives a tuple)."""
    key = (kind, call_made)
    written = _WRITTEN.get(key)
    if written is None:
        skipped = {"id", *_OUTCOME} if call_made else {"id"}
        names = tuple(f.name for f in dataclasses.fields(kind) if f.name not in skipped)
        written = _WRITTEN[key] = (names, attrgetter(*names))
    return written


def read(source: Source) -> Transcript:
    transcript = Transcript(metadata={"source_format": NAME})
    builder = AgnoBuilder(transcript, source.name, source=source)
    if source.is_document:
        builder.read_value(source.document)
    else:
        for line, record in source.records():
            if isinstance(record, MalformedLine):
                builder.warn(record.reason, line)
                source.note(record.record_type, "warned")
            else:
                builder._read_item(record, line)
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], None, _LACKS)
    return transcript


# --- objects (spec A-1) -----------------------------------------------------------------------

#: ``MessageMetrics`` counts ``to_dict()`` keeps (it leaves out zeros and None).
_COUNTS = ("input_tokens", "output_tokens", "total_tokens", "audio_input_tokens",
           "audio_output_tokens", "audio_total_tokens", "cache_read_tokens",
           "cache_write_tokens", "reasoning_tokens", "cost", "duration",
           "time_to_first_token")  # fmt: skip


def _metrics_record(metrics: Any) -> dict[str, Any] | None:
    if metrics is None:
        return None
    record = {}
    for name in _COUNTS:
        value = getattr(metrics, name, None)
        if value is not None and value != 0:
            record[name] = value
    return record or None


def _media_record(item: Any) -> Any:
    return {key: getattr(item, key, None) for key in ("url", "filepath", "mime_type", "format")}


def message_record(message: Any) -> Any:
    """A ``Message`` as the dict its ``to_dict()`` makes, of the keys read here (by attribute:
    no media are encoded, no metrics ``asdict``-copied); anything else as it is."""
    if type(message).__name__ != "Message" or not hasattr(message, "tool_call_error"):
        return plain_value(message) if isinstance(message, MAPPINGS) else message
    record: dict[str, Any] = {
        "id": message.id,
        "role": message.role,
        "content": plain_value(message.content) if isinstance(message.content, list)
        else message.content,
        "from_history": message.from_history,
        "stop_after_tool_call": message.stop_after_tool_call,
        "created_at": message.created_at,
    }  # fmt: skip
    if message.reasoning_content is not None:
        record["reasoning_content"] = message.reasoning_content
    if message.redacted_reasoning_content is not None:
        record["redacted_reasoning_content"] = message.redacted_reasoning_content
    if message.tool_calls:
        record["tool_calls"] = plain_value(message.tool_calls)
    if message.tool_call_id is not None:
        record["tool_call_id"] = message.tool_call_id
        record["tool_name"] = message.tool_name
        record["tool_call_error"] = message.tool_call_error
    metrics = _metrics_record(message.metrics)
    if metrics is not None:
        record["metrics"] = metrics
    for key in _MEDIA:
        items = getattr(message, key, None)
        if items:
            record[key] = [_media_record(item) for item in items]
    return record


def _tool_record(tool: Any) -> Any:
    if not hasattr(tool, "tool_call_id"):
        return plain_value(tool)
    timing = tool.metrics
    record: dict[str, Any] = {
        "tool_call_id": tool.tool_call_id,
        "tool_name": tool.tool_name,
        "tool_call_error": tool.tool_call_error,
        "result": tool.result,
        "child_run_id": tool.child_run_id,
        "requires_confirmation": tool.requires_confirmation,
        "confirmed": tool.confirmed,
        "requires_user_input": tool.requires_user_input,
        "answered": tool.answered,
        "external_execution_required": tool.external_execution_required,
    }
    if timing is not None:
        record["metrics"] = {
            key: getattr(timing, key)
            for key in ("start_time", "end_time", "duration")
            if getattr(timing, key, None) is not None
        }
    return record


def run_record(run: Any) -> dict[str, Any]:
    """A ``RunOutput`` or ``TeamRunOutput`` as the dict its ``to_dict()`` makes, of the keys
    read here, by attribute."""
    record: dict[str, Any] = {}
    for key in ("run_id", "agent_id", "agent_name", "team_id", "team_name", "session_id",
                "parent_run_id", "model", "model_provider", "reasoning_content"):  # fmt: skip
        value = getattr(run, key, None)
        if value is not None:
            record[key] = value
    content = run.content
    record["content"] = content if content is None or isinstance(content, str) else (
        plain_value(content)
    )  # fmt: skip
    status = run.status
    record["status"] = getattr(status, "value", status)
    record["messages"] = plain_each(run.messages or (), message_record)
    if run.tools is not None:
        record["tools"] = [_tool_record(tool) for tool in run.tools]
    if run.metrics is not None:
        to_dict = getattr(run.metrics, "to_dict", None)
        record["metrics"] = to_dict() if callable(to_dict) else plain_value(run.metrics)
    if getattr(run, "reasoning_steps", None):
        record["reasoning_steps"] = len(run.reasoning_steps)
    members = getattr(run, "member_responses", None)
    if members:
        record["member_responses"] = [run_record(member) for member in members]
    return record


def _is_run(value: Any) -> bool:
    return type(value).__name__ in ("RunOutput", "TeamRunOutput") and hasattr(value, "messages")


def session_record(session: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"session_id": session.session_id}
    for key in ("agent_id", "team_id", "user_id"):
        value = getattr(session, key, None)
        if value is not None:
            record[key] = value
    record["runs"] = [run_record(run) if _is_run(run) else plain_value(run)
                      for run in session.runs or ()]  # fmt: skip
    return record


def plain(value: Any) -> Any:
    """An Agno object as the records :func:`read` reads (see the module's doc)."""
    if _is_run(value):
        return run_record(value)
    if type(value).__name__ in ("AgentSession", "TeamSession") and hasattr(value, "runs"):
        return session_record(value)
    if isinstance(value, (list, tuple)):
        return plain_each(value, lambda v: run_record(v) if _is_run(v) else message_record(v))
    if type(value).__name__ == "Message":
        return [message_record(value)]
    if type(value).__name__ in ("Agent", "Team"):
        raise TypeError(
            f"an Agno {type(value).__name__} is not a run: load what its run() returns, or "
            "its session (get_session())"
        )
    return plain_value(value)


# --- live (spec A-2) --------------------------------------------------------------------------

#: The events that show nothing of the conversation (hooks, memory, summaries, compression…).
_QUIET = NameSet(
    {"RunContentCompleted", "RunContinued", "RunIntermediateContent", "PreHookStarted",
     "PreHookCompleted", "PostHookStarted", "PostHookCompleted", "ReasoningStarted",
     "ReasoningCompleted", "ToolCallError", "ParserModelResponseStarted",
     "ParserModelResponseCompleted", "OutputModelResponseStarted",
     "OutputModelResponseCompleted", "MemoryUpdateStarted", "MemoryUpdateCompleted",
     "SessionSummaryStarted", "SessionSummaryCompleted", "CompressionStarted",
     "CompressionCompleted", "CompactionStarted", "CompactionCompleted", "FollowupsStarted",
     "FollowupsCompleted"}
)  # fmt: skip


def run_of_generator(events: Any) -> Any:
    """The run Agno builds while its stream runs: ``run(stream=True)`` returns the generator
    ``_run_stream(agent, run_response, ...)`` (``_arun_stream`` for ``arun``; a team's alike),
    whose ``run_response`` is the very ``RunOutput`` the run ends with. None for anything else."""
    given = generator_arguments(events, "agno")
    run = given.get("run_response") if given is not None else None
    if not _is_run(run):
        return None
    _BUILDING[id(run)] = events
    return run


#: The generator building each run :func:`run_of_generator` gave, by the run's id (held
#: weakly: an ended stream leaves nothing behind), for the messages it holds while it runs.
_BUILDING: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def live_messages(run: Any) -> list[Any]:
    """The messages of ``run`` so far, while its generator runs: ``run_messages`` of
    ``_run_stream`` (``_arun_stream``; a team's alike), the list the model loop appends each
    response and tool result to, which the run gets only when it ends. Empty when the
    generator is not at hand (events replayed, a member's run) or has ended. Agno's own list,
    read only."""
    given = generator_arguments(_BUILDING.get(id(run)), "agno")
    if given is None or given.get("run_response") is not run:  # an id reused
        return []
    messages = getattr(given.get("run_messages"), "messages", None)
    return messages if isinstance(messages, list) else []


def _event_name(event: Any) -> str:
    """An event's kind without the team's prefix (``TeamRunContent`` is ``RunContent``)."""
    name = getattr(event, "event", None)
    name = name if isinstance(name, str) else ""
    return name[4:] if name.startswith("Team") else name


class Follower:
    """Maps an Agno run's events (``run(stream=True, stream_events=True)``) into
    ``transcript`` as they arrive (spec A-2)."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        transcript.metadata.setdefault("source_format", NAME)
        self.builder = AgnoBuilder(transcript, "<stream>", live=True)
        #: The entries the events showed, in order: the run's messages settle them at the end.
        self.shown: list[Entry] = []
        #: The followers of the members' runs, by the delegation call that runs them.
        self.children: dict[str, Follower] = {}
        self._by_run: dict[str, Follower] = {}
        self._run: Any = None
        self._run_id: str | None = None
        self._prompted = False
        self._thinking: Thinking | None = None
        self._text: AssistantText | None = None
        self._response: list[Entry] = []
        #: The timestamp of the response under way: that of its request's start, the second
        #: Agno makes its assistant message in (its ``created_at``), so the run's messages
        #: rarely have a timestamp to add at the end (issue 22: one update less per response).
        self._stamp: str | None = None
        #: The usage of the response under way that no entry of it could take yet: Agno sends
        #: it before the calls of a response of calls alone, whose first call then takes it.
        self._usage: Any = None
        self._delegating: ToolCall | None = None
        #: How many of the run's live messages :meth:`_unannounced` has looked at.
        self._scanned = 0
        #: The delegation call each member's follower runs in, by the follower's id.
        self._hosts: dict[int, str] = {}

    def begin(self, run: Any) -> None:
        """The run Agno builds (:func:`run_of_generator`): its prompt is shown at once."""
        self._run = run
        self._prompt(run)

    def _prompt(self, run: Any) -> None:
        if self._prompted:
            return
        self._prompted = True
        given = getattr(run, "input", None)
        text = _text(getattr(given, "input_content", None)) if given is not None else None
        if text is not None:
            self._show(UserMessage(text=text))

    def feed(self, event: Any) -> None:
        if _is_run(event):  # yield_run_output=True: the final run
            self._run = event
            return
        run_id = getattr(event, "run_id", None)
        if self._run_id is None and isinstance(run_id, str):
            self._run_id = run_id
        elif isinstance(run_id, str) and run_id != self._run_id:
            self._member_event(event, run_id)
            return
        name = _event_name(event)
        if name == "RunStarted":
            model = getattr(event, "model", None)
            if isinstance(model, str) and model:
                self.builder.model = model
                self.transcript.metadata["model"] = model
        elif name == "ModelRequestStarted":
            self._unannounced()  # the last response's calls are all answered by now
            self._thinking = self._text = self._usage = None
            self._response = []
            self._stamp = self.builder.stamp(getattr(event, "created_at", None))
        elif name == "RunContent":
            self._content(event)
        elif name == "ModelRequestCompleted":
            # Agno counts a count not made as 0 here, and its message's metrics leave zeros
            # out (what a load reads): read alike, the run's end has no usage to change.
            usage = counted_usage(
                event.input_tokens or None, event.output_tokens or None,
                event.cache_read_tokens or None, event.cache_write_tokens or None,
                event.reasoning_tokens or None,
            )  # fmt: skip
            if not attach_usage(self._response, usage, self.transcript, model=self.builder.model):
                self._usage = usage
        elif name == "ToolCallStarted":
            self._call(getattr(event, "tool", None))
        elif name == "ToolCallCompleted":
            self._settle(getattr(event, "tool", None))
        elif name == "RunError":
            said = getattr(event, "content", None)
            self._show(AssistantError(message=str(said)) if said else failure("reader.error_event"))
        elif name == "RunCancelled":
            self._show(stop("reader.cancelled"))
        elif name in ("RunCompleted", "RunPaused", "ReasoningStep", "ReasoningContentDelta"):
            pass  # the run's end (settled from the run), and reasoning agents' steps
        elif name not in _QUIET:
            kind = name or type(event).__name__
            self.builder.warn_once(f"event {kind} not shown")

    def _show(self, entry: Entry) -> Entry:
        self.transcript.append(entry)
        self.shown.append(entry)
        return entry

    def _content(self, event: Any) -> None:
        reasoning = getattr(event, "reasoning_content", None)
        if isinstance(reasoning, str) and reasoning:
            if self._thinking is None:
                self._thinking = _new_thinking(reasoning)
                self._thinking.streaming = True
                self._thinking.timestamp = self._stamp
                self._response.append(self._show(self._thinking))
            else:
                self.transcript.update(self._thinking, text=self._thinking.text + reasoning)
        content = getattr(event, "content", None)
        if isinstance(content, str) and content:
            if self._text is None:
                self._text = _new_text(content)
                self._text.model = self.builder.model
                self._text.timestamp = self._stamp
                self._response.append(self._show(self._text))
            else:
                self.transcript.update(self._text, text=self._text.text + content)

    def _call(self, tool: Any) -> None:
        call_id = getattr(tool, "tool_call_id", None)
        if not isinstance(call_id, str) or call_id in self.builder._calls:
            return
        name = getattr(tool, "tool_name", None)
        name = name if isinstance(name, str) and name else "tool"
        args = plain_value(getattr(tool, "tool_args", None))
        call = _new_call(call_id, name, args, describe_args(name, args), "executing", None)
        call.timestamp = self._stamp
        self.builder._calls[call_id] = call
        self._response.append(self._show(call))
        if self._usage is not None:  # the response's first call: where a load puts its usage
            attach_usage(self._response, self._usage, self.transcript, model=self.builder.model)
            self._usage = None
        if name in DELEGATIONS:
            self._delegating = call

    def _unannounced(self) -> None:
        """The calls of the run's messages so far that no event announced, shown after the
        calls of their response, where a load of the run has them: a call past the agent's
        ``tool_call_limit``, which Agno answers with an error result (``tool_call_error``)
        without running it, so without ``ToolCallStarted``. Without the run's generator at
        hand they come when the run's messages settle the stream, after its answer."""
        if self._run is None:
            return
        messages = live_messages(self._run)
        # Only the messages since the last look (each response's calls and results are all
        # in by the next response's start): a long run is not read again at every response.
        records = [message_record(m) for m in messages[self._scanned :]]
        self._scanned = len(messages)
        results = {r.get("tool_call_id"): r for r in records
                   if isinstance(r, MAPPINGS) and r.get("role") == "tool"}  # fmt: skip
        for record in records:
            if not isinstance(record, MAPPINGS) or record.get("role") != "assistant":
                continue
            for raw in as_list(record.get("tool_calls")):
                call_id = raw.get("id") if isinstance(raw, MAPPINGS) else None
                if not isinstance(call_id, str) or not call_id or call_id in self.builder._calls:
                    continue
                call = self.builder._call(raw, "", 0)  # the batch: the message's, at the end
                if call is None:
                    continue
                call.timestamp = self._stamp
                result = results.get(call_id)
                if result is not None:
                    call.status = outcome(result.get("tool_call_error"))
                    call.result = text_result(_text(result.get("content")))
                self._show(call)

    def _settle(self, tool: Any) -> None:
        call_id = getattr(tool, "tool_call_id", None)
        call = self.builder._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            return
        status = outcome(getattr(tool, "tool_call_error", None))
        self.transcript.update(call, status=status, result=text_result(tool.result))
        if call is self._delegating:
            self._delegating = None

    def _member_event(self, event: Any, run_id: str) -> None:
        """An event of a member's run (its team's run as ``parent_run_id``), followed into the
        transcript of the delegation call running it; a member team's members, into theirs."""
        child = self._by_run.get(run_id)
        if child is None:
            parent = getattr(event, "parent_run_id", None)
            if parent in self._by_run and parent != self._run_id:
                child = self._by_run[parent]  # a member team's member: that team follows it
                self._by_run[run_id] = child
            elif self._delegating is not None and parent == self._run_id:
                child = self._adopt(self._delegating, event, run_id)
            else:
                self.builder.warn_once(f"event of another run ({run_id}) not shown")
                return
        child.feed(event)
        call_id = self._hosts.get(id(child))
        if call_id is not None:  # tell the parent's observers the member's run grew
            call = self.builder._calls[call_id]
            self.transcript.update(call, subagent=call.subagent)

    def _adopt(self, call: ToolCall, event: Any, run_id: str) -> Follower:
        """The follower of the member run ``call`` delegates to, its task as its prompt."""
        child = self._by_run[run_id] = self.children[call.call_id] = Follower(Transcript())
        self._hosts[id(child)] = call.call_id
        task = call.args.get("task") if isinstance(call.args, MAPPINGS) else None
        if isinstance(task, str):
            child._prompted = True
            child._show(UserMessage(text=task))
        name = getattr(event, "agent_name", None) or getattr(event, "team_name", None)
        sub = SubAgent(name=name or None, task=task, transcript=child.transcript)
        self.transcript.update(call, subagent=sub)
        return child

    def close(self) -> None:
        run = self._run
        self._unannounced()
        if not self._prompted:
            self.builder.warn(
                "the events carry no prompt: follow the generator run(stream=True) returns "
                "itself to see it",
                None,
            )
        if run is None or not getattr(run, "messages", None):
            self.builder.settle_open(self.builder._calls.values())
            return
        self.settle(run_record(run))

    def settle(self, record: Mapping[str, Any]) -> None:
        """The run's messages settle what the events showed, in place, as a load reads them
        (a prompt the events did not show is left out: it would come after the answer)."""
        builder = AgnoBuilder(
            self.transcript, "<stream>", shown=self.shown, children=self.children,
            skip_prompt=not self._prompted,
        )  # fmt: skip
        builder.read_run(record)


RECORDS = Records(
    mapped={
        "system": 'the system prompt: metadata["system"]',
        "developer": 'a developer message: metadata["system"]',
        "user": "UserMessage (media as attachment lines)",
        "assistant": "reasoning_content → Thinking, content → AssistantText, tool_calls → "
        "ToolCall (one batch, the message id); metrics → Usage of the response",
        "tool": "settles the call of its tool_call_id: tool_call_error true → error, false → "
        "success, missing → unknown; its ToolExecution's timing; a delegation's member run → "
        "SubAgent",
        "run": "a RunOutput / TeamRunOutput: its messages, tools, member_responses (nested "
        "as sub-agents), model, status (error → AssistantError, cancelled → AbortMarker, "
        "paused → PendingAction per waiting call) and metrics (duration: the turn's)",
        "session": "an AgentSession / TeamSession: its runs in order",
    },
    ignored={
        "from_history": "an earlier run's message repeated as context: that run holds it",
        "member run": "a member's run stored beside its team's run: read nested in that run",
    },
)
