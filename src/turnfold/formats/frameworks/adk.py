"""Google ADK sessions and events (spec A-1, A-2, issue 22): a ``Session``
(``google.adk.sessions.session``), a list of its ``Event``s, and their JSON as the ADK writes it
(``session.model_dump_json()``, ``event.model_dump(mode="json")``; the camelCase spelling of
``by_alias=True``, which ``adk web``'s API sends, reads the same).

Input shapes: a session document ``{id, app_name, user_id, state, events, last_update_time}``
(or ``{"events": [...]}`` alone, as the ADK records its sample runs), a list of events, or one
event. An event is ``{author, invocation_id, content: {role, parts},
actions, node_info: {path}, branch, usage_metadata, model_version, timestamp, error_code,
error_message, partial, id}``; its ``content`` is a genai ``Content``. ``load`` turns a
``Session`` or ``Event`` object into the same JSON by the ADK's own serialization; any other
ADK object (an agent, a runner) is refused by name rather than dumped.

Mapping, per event:

- an event of the user (``author == "user"``) with text → :class:`UserMessage` (inline images
  as its ``images``);
- a model event: ``text`` parts → :class:`AssistantText` (``model_version`` as its model),
  ``thought: true`` parts → :class:`Thinking`, ``function_call`` parts → :class:`ToolCall`
  (``call_id`` = the call's ``id``; the calls of one event are one batch, the event's id),
  ``executable_code`` → a ``code_execution`` call settled by the next
  ``code_execution_result`` (``OUTCOME_OK`` success, any other outcome error); inline or file
  data the model returned → a :class:`SystemNotice`; the author in ``meta["agent"]``;
- a ``function_response`` part settles the call with its id (without one, as in sessions
  of ADK's pre-release, the oldest open call of its name): a response holding ``error``
  is ``error`` (ADK's own ``on_tool_error_callback`` convention), any other response
  ``success``: the ADK sends a response only for a tool that returned, so a response without
  an error is the ADK's own success signal. ``{"result": x}`` shows ``x`` (the ADK's wrapping
  of a return that is no dict; ``None`` is a result with no text), any other dict itself, ``{}``
  an empty object, as the trace reader shows it; media the tool returned (the response's own
  ``parts``) are the result's images, a file a line naming it;
- a call its event lists in ``long_running_tool_ids`` (a ``LongRunningFunctionTool``,
  ``meta["long_running"]``) runs on after the function returned: the response the agent
  sends back at once is an interim one ("pending", a ticket), shown as its result while the
  call stays ``executing``; the client's ``function_response`` (an event of the user) settles
  it later, and each response a later one replaces is kept in ``meta["interim_responses"]``.
  A long-running call never answered is still ``executing`` at the end. The calls the ADK
  makes to the client to ask the user (``adk_request_confirmation``,
  ``adk_request_credential``, ``adk_request_input``) left open are ``confirming``, each with
  a :class:`PendingAction` (the tool to approve, the input's message) at the end;
- an event with ``error_code`` while calls of its agent are open is the tool failure ADK
  records before raising the exception: those calls become ``error``, one alone with the code
  and message as its result. Of several (calls run side by side), the ADK records only the
  first exception and not which call raised it: none is given it as its result, and a warning
  says so. Unless more events of its invocation follow (the node retried), the
  exception ended the run: an :class:`AssistantError` at the top level names the tool and the
  error, so the turn reads failed (a followed run's own exception becomes that error). Without
  open calls (a model error: safety, token limits) the event is an :class:`AssistantError`;
- ``actions.transfer_to_agent`` (a handoff) → the ``transfer_to_agent`` call gets a
  :class:`SubAgent` naming the agent handed to (``task`` "handoff from <agent>") whose
  transcript holds that agent's events (by ``author``) until control leaves it: a transfer
  made inside nests again (A -> B -> C gives C inside B inside A), a transfer back to an agent
  up the chain closes the children below it (that call names the agent and opens nothing) and
  its steps continue at its level, and a new user message ends the turn. The last agent's
  closing text is the turn's answer and is shown at the top level, not in the fold. The call
  line says who took over, so no notice is added; a transfer no call explains is a
  :class:`SystemNotice` (subtype ``transfer``); ``actions.escalate`` → a notice (subtype
  ``escalate``); ``actions.compaction`` → :class:`CompactionBoundary`;
- a sub-agent run inside the session (a ``single_turn`` sub-agent the ADK exposes as a tool):
  its events carry the branch ``<agent>@<call id>`` (and a node path under the caller's), and
  are nested as the child transcript of that call (:class:`SubAgent`); nested deeper the same
  way. An event whose node path lies under a path already nested goes to that child too;
- ``usage_metadata`` → :class:`Usage` of the event's last text (``prompt_token_count`` input,
  ``candidates_token_count`` plus ``thoughts_token_count`` output, the thoughts its reasoning,
  ``cached_content_token_count`` cache read), else of its first thinking or call;
- ``timestamp`` (epoch seconds) → ISO-8601 timestamps of the entries, a call's ``started_at``
  and, from its response's event, ``ended_at``;
- ``partial`` events are streamed chunks: a load skips them (the final event that follows
  repeats their text), a follower grows the text live and the final event settles it;
- events of state alone (``state_delta``, ``agent_state``, ``end_of_agent``) are bookkeeping
  and left out; a workflow node's ``output`` without content → a notice;
- a compaction (``actions.compaction``, an event of the user's without content, as
  ``LlmEventSummarizer`` writes it) → :class:`CompactionBoundary` holding the summary.

A session of the ADK's pre-release (December 2024) keeps each model call apart, in
``event_logs`` (``event_id``, ``model_request``, ``model_response``): the logged response's
``model_version`` and ``usage_metadata`` are those of the event it became.

The session's ``id``, ``app_name``, ``user_id`` → ``metadata`` (``session_id``, ``app_name``,
``user_id``), ``last_update_time`` → ``metadata["updated_at"]``, the scalars of ``state`` →
``metadata["state"]``; the root agent (the first author) → ``metadata["agent"]``, the last
``model_version`` → ``metadata["model"]``; a run a tool's exception ended (raised out of
``Runner.run_async``) → ``metadata["outcome"] = "error"``, as its trace's failed agent spans say.

What the session does not record stays absent (L-3): an agent used through ``AgentTool``
runs in a session of its own that the ADK discards, so the parent's session holds only its
call and response, named like the agent and answered like any function: nothing in the events
says an agent ran. The agent tree does (an ``AgentTool`` among an agent's ``tools``), so
``load(session, agent=root_agent)`` (or ``agent=runner``, and ``follow(..., agent=)`` alike)
shows each call of such a tool as a :class:`SubAgent` naming that agent, its ``request`` as
the task, with ``steps_missing``; without the agent it reads as a plain call. The live stream
does not repeat the user's message (``run_async`` yields it only with ``yield_user_message``):
following the generator ``run_async`` (or ``run``) returns, the prompt is read off it (its
``new_message``, :func:`run_of_generator`) and shown first, as the session's own user event
(the event the ADK appended for it, its time included, read from the session the generator
holds, :func:`session_of_run`; ``run`` holds none: its ``run_async`` runs on a thread of its
own, and the prompt takes its time when the run is over, from the runner's session service,
:func:`stored_session`), and so is the runner (its ``self``), whose root agent's tree names
the tools that are agents: ``agent=`` is needed only for events that are not that generator
(given, it wins). The session's id, app and user (the run's arguments) are the followed run's
metadata from its start, and its update time and state when the run ends, as a load of the
session reads them; so are the events the runner appends after the last it yields (with
``EventsCompactionConfig`` on the ``App``, the invocation's summary, never yielded).
A model error (no call open) that ends a followed run is raised by the stream too, and
``follow`` ends the transcript with it: that entry is the event's error, shown once. Where
``run_async``'s frames hold no session, it is read from the runner's session service when
the run is over, awaited on the loop that ran it. A user's loop that leaves ``runner.run``
early (``break``), or a Ctrl-C, stops the run (its generator closed: the ADK cancels the
invocation and joins its thread), and the followed run shows what was followed, then what
the run appended to its session before it stopped that was never yielded (``runner.run``'s
thread runs ahead of the loop that reads it: its next call's result, even its answer), its
calls still open cancelled, then the user's stop, last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    TranscriptBuilder,
    approval_text,
    as_int,
    change_entry,
    describe_args,
    parse_arguments,
    stringify,
    text_result,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.frameworks import generator_arguments, is_interrupt
from turnfold.formats.gemini_api import attachment_line
from turnfold.formats.openai_responses import record_named, unix_timestamp, warned_unix_timestamp
from turnfold.formats.source import (
    Source,
    plain_each,
    plain_value,
    type_of_record,
    warning_count,
)
from turnfold.formats.wording import failure, notice, stop
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    PendingAction,
    PendingKind,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.tools import memory_operation
from turnfold.usage import USAGE_KINDS, count_tokens

NAME = "adk"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


#: The keys of a serialised ``Session`` (snake_case and ``by_alias`` camelCase).
SESSION_KEYS = NameSet({"app_name", "appName", "user_id", "userId", "last_update_time",
                        "lastUpdateTime"})  # fmt: skip
#: Part fields that carry nothing to show: a thought's signature, media settings, metadata.
_SILENT = ("thought_signature", "video_metadata", "media_resolution", "part_metadata", "thought",
           "media_processing", "speech_metadata")  # fmt: skip
_SILENT_PARTS = NameSet({*_SILENT, *(_camel(name) for name in _SILENT)})
#: The name of the call an ``executable_code`` part becomes.
CODE_TOOL = "code_execution"
#: ``code_execution_result.outcome`` values that mean the code ran.
_CODE_OK = NameSet({"OUTCOME_OK"})


_CAMEL: dict[str, str] = {}


def field(record: Any, name: str) -> Any:
    """``record[name]`` in the ADK's snake_case, else in its ``by_alias`` camelCase."""
    if not isinstance(record, Mapping):
        return None
    value = record.get(name)
    if value is None and "_" in name:
        camel = _CAMEL.get(name)
        if camel is None:
            camel = _CAMEL[name] = _camel(name)
        value = record.get(camel)
    return value


# --- detection ---------------------------------------------------------------------------


def is_event(value: Any) -> bool:
    """A serialised ``Event``: an ``author`` and an ``invocation_id``, marks of the ADK."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("author"), str)
        and isinstance(field(value, "invocation_id"), str)
        and any(k in value for k in ("actions", "content", "timestamp", "node_info", "nodeInfo"))
    )


def is_session(value: Any) -> bool:
    """A session document; ``{"events": [...]}`` alone is one too when its events are the
    ADK's: the ADK's own recorded runs (``contributing/samples/*/tests/*.json``) and events
    saved without the session around them are written so."""
    if not (isinstance(value, Mapping) and isinstance(value.get("events"), list)):
        return False
    return any(k in value for k in SESSION_KEYS) or any(is_event(e) for e in value["events"][:30])


def _classify(value: Any) -> int:
    return DISTINCTIVE if is_event(value) else NOT_MINE


def detect(source: Source) -> Evidence:
    """A session document (its ``events`` beside ``app_name``/``user_id``), a list of events,
    or one event; ``author`` with ``invocation_id`` is what only the ADK writes."""
    document = source.document if source.is_document else None
    if isinstance(document, Mapping) and is_session(document):
        events = document["events"][:30]
        if events and not any(is_event(e) for e in events):
            return Evidence.none("a session whose events are no ADK events")
        return Evidence(share=1.0, marks=1 + sum(1 for e in events if is_event(e)))
    if isinstance(document, Mapping) and not is_event(document):
        return Evidence.none("no ADK session or event (author, invocation_id)")
    return Evidence.of(source.head_values(), _classify, "no ADK event (author, invocation_id)")


# --- the builder -------------------------------------------------------------------------


def _path_parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


@dataclasses.dataclass
class _Scope:
    """A transcript events are written to: the root, or the child of a sub-agent call."""

    transcript: Transcript
    call: ToolCall | None = None
    owner: _Scope | None = None


class AdkBuilder(TranscriptBuilder):
    """ADK events (as JSON) into a transcript, for a load and for a follower (``live``).

    ``agent_tools`` names the tools that are agents (:func:`agent_tools`), whose calls are
    sub-agents the session holds no steps of."""

    def __init__(
        self,
        transcript: Transcript,
        source_name: str,
        *,
        live: bool = False,
        agent_tools: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(transcript, source_name, live=live)
        self.agent_tools = dict(agent_tools or {})
        self.root = _Scope(transcript)
        #: Every call by its id: the call and the scope that holds it.
        self.calls: dict[str, tuple[ToolCall, _Scope]] = {}
        #: Calls without a result yet, by id: an error event of their agent fails them.
        self.open: dict[str, ToolCall] = {}
        #: The keys made up for calls written without an id (ADK releases before 1.0 gave the
        #: model's calls none): their responses, without one too, go by name.
        self.id_less: set[str] = set()
        #: The last response of each long-running call (``long_running_tool_ids``), by id:
        #: the response a later one replaces is kept in that call's ``meta``.
        self.responses: dict[str, Any] = {}
        #: The child scope of each sub-agent call, by call id, and of each node path nested.
        self.children: dict[str, _Scope] = {}
        self.paths: dict[str, _Scope] = {}
        #: The code execution call awaiting its result, per scope.
        self._code: dict[int, ToolCall] = {}
        #: Text and thinking streamed by partial events, per author and path (live only).
        self._streaming: dict[str, list[Entry]] = {}
        #: The agents control was handed to (``transfer_to_agent``) in this turn, outermost
        #: first, each with the child scope its steps go to: A -> B -> C is ``[B, C]``.
        self.handoffs: list[tuple[str, _Scope]] = []
        #: The agent in control at the top level (where a chain of handoffs starts).
        self.speaker: str | None = None
        #: The tool failure an error event recorded, while no later event of its invocation
        #: shows the run went on: its invocation id and the error the run ended on.
        self.raised: tuple[Any, str, AssistantError] | None = None
        #: Live: the top level's model error (no call open) of the last event, held until
        #: the next event shows the run went on, or the run ends (:meth:`_place_held_error`).
        self._held_error: AssistantError | None = None
        self.events_fed = 0

    def update(self, entry: Entry, **changes: Any) -> None:
        """In the transcript of the scope that holds ``entry`` (a call's; else the root)."""
        found = self.calls.get(entry.call_id) if isinstance(entry, ToolCall) else None
        (found[1] if found is not None else self.root).transcript.update(entry, **changes)

    # --- where an event goes -----------------------------------------------------------

    def scope_of(self, event: Mapping[str, Any]) -> _Scope:
        """The branch's ``<agent>@<call id>`` segments name the call a sub-agent runs for
        (the deepest known one wins); else the node path, or its nearest nested parent."""
        branch = event.get("branch")
        path = field(field(event, "node_info"), "path")
        path = path if isinstance(path, str) else ""
        if isinstance(branch, str) and "@" in branch:
            for segment in reversed(branch.split(".")):
                name, _, call_id = segment.rpartition("@")
                found = self.calls.get(call_id)
                if found is not None and found[0].name == name:
                    scope = self._child(found[0], found[1], name)
                    if path:
                        self.paths.setdefault(path, scope)
                    return scope
        probe = path
        while probe:
            nested = self.paths.get(probe)
            if nested is not None:
                return nested
            probe = _path_parent(probe)
        return self._handoff_scope(event.get("author"))

    def _handoff_scope(self, author: Any) -> _Scope:
        """The scope of an agent control was handed to: its own child while it has control. An
        event of an agent further up the chain means control is back there (the children below
        it are closed); another author (a workflow agent's child, say) acts in the current one."""
        for depth in range(len(self.handoffs) - 1, -1, -1):
            if self.handoffs[depth][0] == author:
                del self.handoffs[depth + 1 :]
                return self.handoffs[depth][1]
        if self.handoffs and author == self.speaker:
            self.handoffs.clear()
            return self.root
        if not self.handoffs and isinstance(author, str) and author and author != "user":
            self.speaker = author
        return self.handoffs[-1][1] if self.handoffs else self.root

    def _child(self, call: ToolCall, owner: _Scope, name: str, task: str | None = None) -> _Scope:
        scope = self.children.get(call.call_id)
        if scope is None:
            child = Transcript(metadata={"source_format": NAME, "agent": name})
            scope = self.children[call.call_id] = _Scope(child, call, owner)
            owner.transcript.update(call, subagent=SubAgent(name=name, task=task, transcript=child))
        return scope

    def _append(self, scope: _Scope, entry: Entry) -> Entry:
        return scope.transcript.append(entry)

    # --- one event ---------------------------------------------------------------------

    def feed(self, event: Mapping[str, Any], line: int) -> str:
        """Add one event; returns its record type for the accounting (see :data:`RECORDS`)."""
        self.events_fed += 1
        if self._held_error is not None:  # the run went on after it: shown where it came
            self._append(self.root, self._held_error)
            self._held_error = None
        if self.raised is not None:
            if field(event, "invocation_id") == self.raised[0]:
                self.raised = None  # the run went on after the tool's error (a retry)
            else:
                self.run_ended_on_error()  # a new run: the one before ended on the error
        author = event.get("author") if isinstance(event.get("author"), str) else ""
        timestamp = warned_unix_timestamp(
            event.get("timestamp"), lambda reason: self.warn(reason, line),
            record_named("event", event.get("id")), "timestamp",
        )  # fmt: skip
        content = event.get("content")
        parts = field(content, "parts") if isinstance(content, Mapping) else None
        parts = [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []
        found = event.get("actions")
        actions: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        scope = self.scope_of(event)
        agent = author if author and author != "user" else None
        if agent and "agent" not in self.transcript.metadata:
            self.transcript.metadata["agent"] = agent
        model = field(event, "model_version")
        if isinstance(model, str) and model:
            self.transcript.metadata["model"] = model
        key = f"{author}|{field(field(event, 'node_info'), 'path') or ''}"
        if event.get("partial") is True:
            if self.live:
                self._stream(scope, key, parts, agent, timestamp, model)
            return "partial"
        streamed = self._streaming.pop(key, [])
        kind = "actions"
        responses = [p for p in parts if isinstance(field(p, "function_response"), Mapping)]
        if author == "user" and not responses and self.handoffs:
            # A new message of the user: the last turn is over, and with it the handoffs.
            self.end_turn()
            scope = self.root
        # An event of the user's without content is not a message: a compaction's summary
        # (``LlmEventSummarizer`` writes it as the user's) or state alone.
        if author == "user" and not responses and isinstance(content, Mapping):
            kind = "user"
            self._user(scope, parts, timestamp, line)
        elif responses:
            kind = "function_response"
            self._responses(scope, parts, event, timestamp, line)
        elif parts:
            kind = "model"
            self._model(scope, parts, event, agent, timestamp, model, streamed, line)
        error = field(event, "error_code")
        if error not in (None, "") or field(event, "error_message"):
            self._error(scope, event, agent, timestamp, line)
            kind = "error" if kind == "actions" else kind
        if kind == "actions":
            kind = self._actions_only(scope, event, actions, agent, timestamp)
        self._after_actions(scope, event, actions, agent, timestamp)
        return kind

    def _user(
        self, scope: _Scope, parts: list[Mapping[str, Any]], ts: str | None, line: int
    ) -> None:
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and p["text"]]
        images = _images(parts)
        if not texts and not images:
            self.warn("a user event without text skipped", line)
            return
        self._append(scope, UserMessage(text="\n".join(texts), images=images, timestamp=ts))

    def _stream(
        self,
        scope: _Scope,
        key: str,
        parts: list[Mapping[str, Any]],
        agent: str | None,
        ts: str | None,
        model: Any,
    ) -> None:
        """A partial event's text grows the streamed entry of its agent (live only)."""
        entries = self._streaming.setdefault(key, [])
        for part in parts:
            text = part.get("text")
            if not isinstance(text, str) or not text:
                continue
            thought = part.get("thought") is True
            last = entries[-1] if entries else None
            if isinstance(last, Thinking if thought else AssistantText):
                assert isinstance(last, (Thinking, AssistantText))
                scope.transcript.update(last, text=last.text + text)
            else:
                meta = {"agent": agent} if agent else {}
                entry: Entry = (
                    Thinking(text=text, streaming=True, timestamp=ts, meta=meta)
                    if thought
                    else AssistantText(
                        text=text, model=model if isinstance(model, str) else None,
                        timestamp=ts, meta=dict(meta),
                    )
                )  # fmt: skip
                entries.append(self._append(scope, entry))

    def _model(
        self,
        scope: _Scope,
        parts: list[Mapping[str, Any]],
        event: Mapping[str, Any],
        agent: str | None,
        ts: str | None,
        model: Any,
        streamed: list[Entry],
        line: int,
    ) -> None:
        """A model response: thoughts, text and calls in part order, then its usage. Entries a
        partial stream already showed are settled in place rather than shown twice."""
        meta = {"agent": agent} if agent else {}
        model_name = model if isinstance(model, str) and model else None
        batch = event.get("id") if isinstance(event.get("id"), str) and event.get("id") else None
        written: list[Entry] = []
        pending: list[Entry] = list(streamed)
        texts: dict[str, str] = {}
        order: list[tuple[str, Any]] = []
        for index, part in enumerate(parts):
            text = part.get("text")
            if isinstance(text, str):
                if text:
                    kind = "thought" if part.get("thought") is True else "text"
                    if order and order[-1][0] == kind:
                        texts[order[-1][1]] += text
                    else:
                        slot = f"{kind}{index}"
                        texts[slot] = text
                        order.append((kind, slot))
                continue
            call = field(part, "function_call")
            code = field(part, "executable_code")
            outcome = field(part, "code_execution_result")
            if isinstance(call, Mapping):
                order.append(("call", call))
            elif isinstance(code, Mapping):
                order.append(("code", code))
            elif isinstance(outcome, Mapping):
                order.append(("outcome", outcome))
            elif field(part, "inline_data") is not None or field(part, "file_data") is not None:
                order.append(("data", part))
            else:
                unknown = sorted(
                    k for k, v in part.items() if v is not None and k not in _SILENT_PARTS
                )
                if unknown:
                    self.warn(f"a part of kind {', '.join(unknown)} skipped", line)
        for kind, value in order:
            if kind in ("thought", "text"):
                text = texts[value]
                wanted = Thinking if kind == "thought" else AssistantText
                live = next((e for e in pending if isinstance(e, wanted)), None)
                if live is not None:
                    pending.remove(live)
                    changes: dict[str, Any] = {"text": text}
                    if isinstance(live, Thinking):
                        changes["streaming"] = False
                    scope.transcript.update(live, **changes)
                    written.append(live)
                elif kind == "thought":
                    written.append(Thinking(text=text, timestamp=ts, meta=dict(meta)))
                else:
                    written.append(
                        AssistantText(text=text, model=model_name, timestamp=ts, meta=dict(meta))
                    )
            elif kind == "call":
                written.append(self._call(value, agent, ts, batch, event))
            elif kind == "code":
                code_call = self._code_call(value, agent, ts, batch, event, len(written))
                self._code[id(scope)] = code_call
                written.append(code_call)
            elif kind == "outcome":
                self._code_outcome(scope, value, ts, line)
            else:
                written.append(_data_notice(value, ts, meta))
        usage = _usage(field(event, "usage_metadata"))
        if usage is not None and written:
            # Its last text, else its first thinking or call carries it (turnfold.usage).
            texts_written = [e for e in written if isinstance(e, AssistantText)]
            carriers: list[Entry] = [*texts_written[-1:]] or [
                e for e in written if isinstance(e, USAGE_KINDS)
            ]
            if carriers:
                change_entry(scope.transcript, carriers[0], usage=usage)
        for entry in written:
            if not (entry.id and scope.transcript.get(entry.id) is entry):
                self._append(scope, entry)
                if isinstance(entry, ToolCall) and entry.call_id:
                    self.calls[entry.call_id] = (entry, scope)

    def _call(
        self, call: Mapping[str, Any], agent: str | None, ts: str | None, batch: Any, event: Any
    ) -> ToolCall:
        raw_name = call.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else ""
        if not call_id:  # the ADK gives every call an id; one missing still needs a key
            call_id = f"{event.get('id') or 'event'}:{name}:{len(self.id_less)}"
            self.id_less.add(call_id)
        args = parse_arguments(plain_value(call.get("args")))
        meta: dict[str, Any] = {"agent": agent} if agent else {}
        running = field(event, "long_running_tool_ids")
        if isinstance(running, list) and call_id in running:
            meta["long_running"] = True
        subagent = None
        if name in self.agent_tools:  # an AgentTool: its run is in a session the ADK discards
            request = args.get("request") if isinstance(args, Mapping) else None
            task = request if isinstance(request, str) and request else None
            subagent = SubAgent(name=self.agent_tools[name], task=task, steps_missing=True)
        tool = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args),
            status=self.open_status,
            batch_id=batch,
            started_at=ts,
            timestamp=ts,
            memory=memory_operation({"name": name}),
            subagent=subagent,
            meta=meta,
        )
        self.open[call_id] = tool
        return tool

    def _code_call(
        self, code: Mapping[str, Any], agent: str | None, ts: str | None, batch: Any, event: Any,
        index: int,
    ) -> ToolCall:  # fmt: skip
        args = {"code": code.get("code"), "language": code.get("language")}
        tool = ToolCall(
            call_id=f"{event.get('id') or 'event'}:code{index}",
            name=CODE_TOOL,
            args=args,
            description=_first_line(code.get("code")),
            status=self.open_status,
            batch_id=batch,
            started_at=ts,
            timestamp=ts,
            meta={"agent": agent} if agent else {},
        )
        self.open[tool.call_id] = tool
        return tool

    def _code_outcome(
        self, scope: _Scope, outcome: Mapping[str, Any], ts: str | None, line: int
    ) -> None:
        call = self._code.pop(id(scope), None)
        if call is None:
            self.warn("a code execution result without its code skipped", line)
            return
        output = outcome.get("output")
        status: ToolStatus = "success" if outcome.get("outcome") in _CODE_OK else "error"
        self.open.pop(call.call_id, None)
        changes = {
            "status": status,
            "result": text_result(output if isinstance(output, str) else None),
            "ended_at": ts,
        }
        # The code and its result may come in one event: the call is not shown yet.
        change_entry(scope.transcript, call, **changes)

    def _responses(
        self,
        scope: _Scope,
        parts: list[Mapping[str, Any]],
        event: Mapping[str, Any],
        ts: str | None,
        line: int,
    ) -> None:
        images = _images(parts)
        for part in parts:
            response = field(part, "function_response")
            if not isinstance(response, Mapping):
                continue
            call_id = response.get("id") or self._id_less_call(response.get("name"))
            found = self.calls.get(call_id) if isinstance(call_id, str) else None
            if found is None:
                self.warn(f"a function response for an unknown call id {call_id!r} skipped", line)
                continue
            call, owner = found
            self.open.pop(call.call_id, None)
            raw = response.get("response")
            returned, files = _returned_media(field(response, "parts"))
            text, failed = _response_text(raw, media=bool(returned or files))
            text = "\n".join(t for t in (text, *files) if t is not None) if files else text
            result = text_result(text, images=[*images, *returned])
            images = []  # a response event's inline data goes with its first response
            status: ToolStatus = "error" if failed else "success"
            changes: dict[str, Any] = {}
            if call.meta.get("long_running") is True:
                status = self._long_running(call, raw, event, failed, changes)
            if status != "executing":  # an interim response does not end the call
                changes["ended_at"] = ts
            owner.transcript.update(call, status=status, result=result, **changes)
            self._refresh(call)

    def _id_less_call(self, name: Any) -> str | None:
        """The key of the oldest open call of ``name`` written without an id: a response
        without one answers it (the order the ADK ran and answered them in)."""
        return next(
            (key for key, call in self.open.items() if key in self.id_less and call.name == name),
            None,
        )

    def _long_running(
        self, call: ToolCall, raw: Any, event: Mapping[str, Any], failed: bool,
        changes: dict[str, Any],
    ) -> ToolStatus:  # fmt: skip
        """A response to a long-running call (``LongRunningFunctionTool``: one the event that
        made it lists in ``long_running_tool_ids``). The function's own return, which the ADK
        sends back at once, is an interim response ("pending", a ticket): the operation goes
        on, and its result comes later from the client, as a ``function_response`` of the user
        with the call's id (``google/adk/tools/long_running_tool.py``; ``events/_interrupts.py``
        counts the call open until then). The call runs while it waits, its interim response
        shown; a later response settles it, and the one it replaces is kept in
        ``meta["interim_responses"]``."""
        previous = self.responses.get(call.call_id, _NONE)
        self.responses[call.call_id] = plain_value(raw)
        if previous is not _NONE:
            kept = [*call.meta.get("interim_responses", []), previous]
            changes["meta"] = {**call.meta, "interim_responses": kept}
        if event.get("author") != "user" and not failed:
            return "executing"
        return "error" if failed else "success"

    def _refresh(self, call: ToolCall) -> None:
        """A sub-agent call's counts, from its child transcript as it stands."""
        scope = self.children.get(call.call_id)
        if scope is None or scope.owner is None or call.subagent is None:
            return
        child = scope.transcript
        scope.owner.transcript.update(
            call,
            subagent=dataclasses.replace(
                call.subagent,
                tool_count=len(child.tool_calls()),
                output_tokens=count_tokens(child.entries).get("output_tokens"),
            ),
        )

    def _error(
        self,
        scope: _Scope,
        event: Mapping[str, Any],
        agent: str | None,
        ts: str | None,
        line: int,
    ) -> None:
        """A tool's exception (ADK records it, then raises it) fails the agent's open calls;
        with none open, the model's own error. The exception is the result of the call that
        raised it only when one call is open: of several, which raised it is not recorded."""
        code = field(event, "error_code")
        message = field(event, "error_message")
        text = ": ".join(str(v) for v in (code, message) if v not in (None, ""))
        failed = [
            call
            for call in self.open.values()
            if self.calls.get(call.call_id, (None, None))[1] is scope
            and (agent is None or call.meta.get("agent") == agent)
        ]
        # ADK runs one response's calls side by side (``_gather_or_cancel`` in
        # flows/llm_flows/tools/_batch_executor.py, 2.13.0): the first exception ends the batch,
        # the calls still running are cancelled, the exceptions of the others are dropped, and
        # the results of those that returned are kept (their response event comes first). So
        # one call left open raised the exception recorded; of several, one raised it and
        # the others raised their own, unrecorded, or were cancelled: each failed (the batch
        # did, and none of them gave the run a result), none is given another's exception.
        own = text_result(text) if len(failed) == 1 else None
        for call in failed:
            self.open.pop(call.call_id, None)
            scope.transcript.update(call, status="error", result=own, ended_at=ts)
            self._refresh(call)
        if len(failed) > 1:
            named = ", ".join(f"{call.name or 'a tool'} ({call.call_id})" for call in failed[:10])
            own_id = event.get("id")
            which = (
                f"the error event {own_id[:80]}"
                if isinstance(own_id, str) and own_id
                else "an error event"
            )
            self.warn(
                f"{which} records one exception "
                f"({text}) for the calls {named}, run side by side: which of them raised it is "
                "not recorded (the ADK records the first exception of a batch; the other calls "
                "raised their own or were cancelled), so each is failed without a result",
                line,
            )
        meta = {"agent": agent} if agent else {}
        if not failed:
            error = AssistantError(message=text, timestamp=ts, meta=meta)
            if self.live and scope is self.root:
                self._held_error = error  # the stream may raise it too (_place_held_error)
            else:
                self._append(scope, error)
            return
        # The ADK raises the exception once it is recorded (``workflow/_node_runner.py``), and
        # ``Runner.run_async`` re-raises it: unless the node is retried (more events of this
        # invocation follow), the run ended on it, and the turn failed (spec P-7: a failed
        # tool alone does not fail a turn, a run it ended does).
        # The tools the exception may have come from, in the message's words: a tool with no
        # name is "a tool" in the message, never a value.
        names = list(dict.fromkeys(call.name for call in failed if call.name))
        unnamed = not all(call.name for call in failed)
        # The names numbered: {names} lists them as the view's language does (with_words).
        listed = {f"names.{n}": v for n, v in enumerate(names if unnamed else names[:-1])}
        if names and unnamed:
            key, who = "reader.run_ended_raised.either_a_tool", listed
        elif len(names) > 1:
            key, who = "reader.run_ended_raised.either", listed
        elif names:
            key, who = "reader.run_ended_raised", {"who": names[0]}
        else:
            key, who = "reader.run_ended_raised.a_tool", {}
        said = {**who, "last": names[-1] if names else "", "said": text}
        ended = failure(key, said, timestamp=ts, meta=meta)
        self.raised = (field(event, "invocation_id"), text, ended)

    def _place_held_error(self) -> None:
        """The followed run ended on the model error held (an exceeded ``max_llm_calls``…):
        its stream raised it, and :class:`~turnfold.following.Follow` ended the transcript
        with it (``"<type>: <message>"``, the words of the error event). That entry is this
        error, given its time and agent, so it is not shown twice and a follow ends as a load
        does; a run that ended without raising it gets it appended."""
        held, self._held_error = self._held_error, None
        if held is None:
            return
        entries = self.root.transcript.entries
        last = entries[-1] if entries else None
        if isinstance(last, AssistantError) and not last.meta and last.message == held.message:
            self.root.transcript.update(last, timestamp=held.timestamp, meta=held.meta)
        else:
            self._append(self.root, held)

    def run_ended_on_error(self) -> None:
        """The run ended on the tool error last recorded (nothing of its invocation came
        after): said at the top level, where the turn's outcome is read.

        A followed run's stream raised that exception, and :class:`~turnfold.following.Follow`
        ended the transcript with it (``"<type>: <message>"``, the words of the ADK's error
        event): that entry is the one this error becomes, so a follow ends as a load does."""
        if self.raised is None:
            return
        _, raised, ended = self.raised
        self.raised = None
        # The exception left ``Runner.run_async``: the run errored, the session's outcome
        # (spec H-6) as its trace's, whose agent spans record that exception.
        self.root.transcript.metadata["outcome"] = "error"
        entries = self.root.transcript.entries
        last = entries[-1] if entries else None
        if (
            self.live
            and isinstance(last, AssistantError)
            and not last.meta
            and last.message == raised
        ):
            self.root.transcript.update(
                last, message=ended.message, timestamp=ended.timestamp, meta=ended.meta
            )
        else:
            self._append(self.root, ended)

    def _actions_only(
        self,
        scope: _Scope,
        event: Mapping[str, Any],
        actions: Mapping[str, Any],
        agent: str | None,
        ts: str | None,
    ) -> str:
        """The record type of an event without content: its actions, its output, or state."""
        if any(field(actions, k) for k in ("transfer_to_agent", "escalate", "compaction")):
            return "actions"
        output = event.get("output")
        if output is not None:
            key = "reader.output.of" if agent else "reader.output"
            said = {"who": agent, "output": stringify(output)}
            self._append(scope, notice(key, said, subtype="output", timestamp=ts))
            return "output"
        if field(actions, "agent_state") is not None or field(actions, "end_of_agent"):
            return "agent_state"
        return "state_delta"

    def _after_actions(
        self,
        scope: _Scope,
        event: Mapping[str, Any],
        actions: Mapping[str, Any],
        agent: str | None,
        ts: str | None,
    ) -> None:
        target = field(actions, "transfer_to_agent")
        if isinstance(target, str) and target:
            self._transfer(scope, target, agent, ts)
        if field(actions, "escalate") is True:
            key = "reader.escalated.by" if agent else "reader.escalated"
            self._append(scope, notice(key, {"who": agent}, subtype="escalate", timestamp=ts))
        compaction = field(actions, "compaction")
        if isinstance(compaction, Mapping):
            summary = field(compaction, "compacted_content")
            parts = field(summary, "parts") if isinstance(summary, Mapping) else None
            texts = [
                p["text"]
                for p in (parts if isinstance(parts, list) else [])
                if isinstance(p, Mapping) and isinstance(p.get("text"), str)
            ]
            self._append(
                scope,
                CompactionBoundary(summary="\n".join(texts) or None, timestamp=ts),
            )

    def _transfer(self, scope: _Scope, target: str, agent: str | None, ts: str | None) -> None:
        """``transfer_to_agent``: the call that made it holds the new agent's steps from here
        on (spec A-1, issue 22), nested again for a transfer made inside them; a transfer back
        to an agent up the chain closes the children below it, whose steps continue at its
        level. The call line says who took over, so no notice is added; a transfer no call
        explains keeps its notice."""
        transfer = next(
            (
                call
                for call, _ in reversed(self.calls.values())
                if call.name == "transfer_to_agent"
                and isinstance(call.args, Mapping)
                and call.args.get("agent_name") == target
                and call.subagent is None
            ),
            None,
        )
        task = f"handoff from {agent}" if agent else None
        if transfer is None:
            said = {"target": target}
            self._append(
                scope, notice("reader.transferred", said, subtype="transfer", timestamp=ts)
            )
            return
        owner = self.calls[transfer.call_id][1]
        chain = [name for name, _ in self.handoffs]
        if target in chain or target == self.speaker:
            owner.transcript.update(transfer, subagent=SubAgent(name=target, task=task))
            self._handoff_scope(target)
            return
        self.handoffs.append((target, self._child(transfer, owner, target, task)))

    def end_turn(self) -> None:
        """The turn ended inside a handoff: the last agent's closing text is the turn's answer,
        shown at the top level where the user reads it rather than in the fold (spec A-1)."""
        if not self.handoffs:
            return
        scope = self.handoffs[-1][1]
        self.handoffs.clear()
        child = scope.transcript
        answer = child.entries[-1] if child.entries else None
        if not isinstance(answer, AssistantText) or scope.call is None or scope.owner is None:
            return
        if any(e is answer for entries in self._streaming.values() for e in entries):
            return  # still streaming: the final event settles it first
        # The Transcript has no removal (views key on ids that never go away), so the child is
        # rebuilt without the answer, its entries keeping their ids.
        rest = Transcript(child.entries[:-1], metadata=dict(child.metadata),
                          warnings=list(child.warnings))  # fmt: skip
        scope.transcript = rest
        call = scope.call
        if call.subagent is not None:
            scope.owner.transcript.update(
                call, subagent=dataclasses.replace(call.subagent, transcript=rest)
            )
        self._append(self.root, dataclasses.replace(answer, id=""))

    def finish(self) -> None:
        """The run ended: calls without a result stay unknown (L-3), but a long-running call
        runs on (its result comes from the client later), streamed text settles, the turn's
        answer is shown at the top level, and every sub-agent's counts are final."""
        asking: list[PendingAction] = []
        for call in list(self.open.values()):
            running = call.meta.get("long_running") is True
            # Older sessions list no ids for these two: the ADK knows them by name
            # (``extract_event_interrupt_ids`` in ``events/_interrupts.py``).
            asks = running or call.name in ("adk_request_input", "adk_request_credential")
            action = _CLIENT_CALLS.get(call.name) if asks else None
            if action is not None:
                text, meta = _asked(call)
                asking.append(self.wait_on_user(call, action, text, meta=meta))
                continue
            status: ToolStatus = "executing" if running else "unknown"
            if call.status != status:
                self.update(call, status=status)
        self.open.clear()
        for entries in self._streaming.values():
            for entry in entries:
                if isinstance(entry, Thinking) and entry.streaming:
                    owner_scope = next(
                        (s for s in [self.root, *self.children.values()]
                         if s.transcript.get(entry.id) is entry), self.root,
                    )  # fmt: skip
                    owner_scope.transcript.update(entry, streaming=False)
        self._streaming.clear()
        self.end_turn()
        self.run_ended_on_error()
        self._place_held_error()
        for pending in asking:  # the run waits on the user: said where the user reads
            self._append(self.root, pending)
        for call_id in self.children:
            self._refresh(self.calls[call_id][0])


#: No response yet (a response may be JSON ``null``).
_NONE = object()
#: The calls the ADK makes to its client to ask the user (``CLIENT_FUNCTION_CALL_NAMES`` of
#: ``google/adk/utils/_function_call_names.py``): a tool's confirmation, credentials, a
#: workflow's ``RequestInput``. Each is listed in its event's ``long_running_tool_ids`` and
#: is answered by a ``function_response`` of the user; one still open when the run ends is
#: what the run waits on (``events/_interrupts.py``, ``index_open_interrupts``).
_CLIENT_CALLS: dict[str, PendingKind] = {
    "adk_request_confirmation": "permission",
    "adk_request_credential": "permission",
    "adk_request_input": "question",
}


def _asked(call: ToolCall) -> tuple[str, dict[str, Any]]:
    """The text and meta of the pending action of a client call the run waits on, in the words
    of its arguments: the tool to confirm (``originalFunctionCall``, with
    ``toolConfirmation.hint``), the ``message`` of a ``RequestInput``."""
    args = call.args if isinstance(call.args, Mapping) else {}
    meta: dict[str, Any] = {"agent": call.meta["agent"]} if call.meta.get("agent") else {}
    if call.name == "adk_request_confirmation":
        original = field(args, "original_function_call")
        name = field(original, "name")
        hint = field(field(args, "tool_confirmation"), "hint")
        if isinstance(hint, str) and hint:
            meta["hint"] = hint
        text = approval_text(name)
    elif call.name == "adk_request_input":
        message = field(args, "message")
        text = message if isinstance(message, str) and message else "Input requested"
    else:
        text = "Credentials requested"
    return text, meta


def _first_line(code: Any) -> str | None:
    if not isinstance(code, str):
        return None
    return next((line.strip() for line in code.splitlines() if line.strip()), None)


def _images(parts: list[Mapping[str, Any]]) -> list[ImageData]:
    images = []
    for part in parts:
        data = field(part, "inline_data")
        if isinstance(data, Mapping) and isinstance(data.get("data"), str):
            mime = field(data, "mime_type")
            images.append(ImageData(media_type=mime if isinstance(mime, str) else "",
                                    data=data["data"]))  # fmt: skip
    return images


def _data_notice(part: Mapping[str, Any], ts: str | None, meta: dict[str, Any]) -> SystemNotice:
    """Inline or file data the model returned (an image it generated, a file it cites)."""
    data = field(part, "inline_data") or field(part, "file_data") or {}
    mime = field(data, "mime_type") if isinstance(data, Mapping) else None
    uri = field(data, "file_uri") if isinstance(data, Mapping) else None
    typed, cited = isinstance(mime, str) and bool(mime), isinstance(uri, str) and bool(uri)
    key = _RETURNED_DATA[typed, cited]
    said = {"mime": mime, "uri": uri}
    return notice(key, said, subtype="attachment", timestamp=ts, meta=dict(meta))


#: The notice of data the model returned, by whether it says its type and where it is.
_RETURNED_DATA = {
    (False, False): "reader.model_returned_data",
    (True, False): "reader.model_returned_data.mime",
    (False, True): "reader.model_returned_data.uri",
    (True, True): "reader.model_returned_data.mime.uri",
}


def _response_text(response: Any, *, media: bool = False) -> tuple[str | None, bool]:
    """A ``function_response.response`` as text, and whether it holds an error: ADK's tool
    error convention (``on_tool_error_callback``, unknown tools) is ``{"error": ...}``.

    The ADK answers every call with a dict (``flows/llm_flows/tools/_caller.py``,
    ``_build_function_response_content``): a tool's dict as it returned it, any other value
    wrapped as ``{"result": value}``. So ``{}`` is a tool that returned an empty object, shown
    as such, as the trace reader shows it (:func:`.traces.messages.adk_response`); ``{"result":
    None}`` one that returned ``None``: a result with no text. Only where the response carries
    ``media`` (its ``parts``) is ``{}`` what is left of a return that was only media
    (``_extract_multimodal_parts``: ``remaining or {}``), and then no text.

    >>> _response_text({}), _response_text({"result": None}), _response_text({}, media=True)
    (('{}', False), (None, False), (None, False))
    """
    if isinstance(response, Mapping):
        error = response.get("error")
        if error not in (None, "", {}):
            return stringify(error), True
        if set(response) == {"result"}:
            value = response["result"]
            return (stringify(value) if value is not None else None), False
        return (None if media and not response else stringify(dict(response))), False
    return (stringify(response) if response is not None else None), False


def _returned_media(parts: Any) -> tuple[list[ImageData], list[str]]:
    """The media a tool returned, which the ADK moves out of its response into the function
    response's own ``parts`` (``_extract_multimodal_parts``: a ``Part`` of inline bytes or of a
    file's URI): the inline data as images of the result, each file as a line naming it (never
    fetched)."""
    listed = [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []
    files = []
    for part in listed:
        data = field(part, "file_data")
        if isinstance(data, Mapping):
            uri, mime = field(data, "file_uri"), field(data, "mime_type")
            files.append(attachment_line({"fileData": {"fileUri": uri, "mimeType": mime}}))
    return _images(listed), files


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, Mapping):
        return None
    output = as_int(field(raw, "candidates_token_count"))
    thoughts = as_int(field(raw, "thoughts_token_count"))
    prompt = as_int(field(raw, "prompt_token_count"))
    # The results a server-side tool fed back to the model are counted apart from the prompt
    # (the total adds them): input it was billed for, as gemini_parts.usage_from counts them.
    tool_use = as_int(field(raw, "tool_use_prompt_token_count"))
    usage = Usage(
        input_tokens=(prompt or 0) + tool_use if tool_use else prompt,
        # Gemini counts thoughts apart from the candidates; turnfold.usage's output holds them.
        output_tokens=output + (thoughts or 0) if output is not None else thoughts,
        cache_read_tokens=as_int(field(raw, "cached_content_token_count")),
        reasoning_tokens=thoughts,
    )
    return None if usage == Usage() else usage


# --- run objects (spec A-1) -----------------------------------------------------------------

#: What :func:`plain` makes of an ADK object that is neither a session nor an event.
OTHER_OBJECT = "_adk_object"


def _dump(value: Any) -> Any:
    """The ADK's own serialization (``model_dump(mode="json")``), nulls left out."""
    return value.model_dump(mode="json", exclude_none=True)


def plain(value: Any) -> Any:
    """A ``Session``, an ``Event`` or a list of events as the JSON the ADK writes for them;
    any other ADK object as a marker naming its type (an agent or a runner is never copied)."""
    if isinstance(value, (list, tuple)):
        return plain_each(value, plain)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    kind = type(value).__name__
    if hasattr(value, "events") and hasattr(value, "app_name") and hasattr(value, "model_dump"):
        try:
            return _dump(value)
        except Exception:  # a state value the ADK cannot serialise: the events still can
            return {
                "id": getattr(value, "id", None),
                "app_name": value.app_name,
                "user_id": getattr(value, "user_id", None),
                "events": plain_each(value.events, plain),
            }
    if (
        hasattr(value, "author")
        and hasattr(value, "invocation_id")
        and hasattr(value, "model_dump")
    ):
        return _dump(value)
    if type(value).__module__.startswith("google.adk"):
        return {OTHER_OBJECT: kind}
    return plain_value(value)


# --- the agent tree (load(..., agent=)) ------------------------------------------------------

#: ``load(..., agent=)`` is read: the agent tree says which tools are agents.
READS_AGENT = True


def agent_tools(agent: Any) -> dict[str, str]:
    """The tools that are agents (``AgentTool``) anywhere in the tree of ``agent`` (a root
    agent, a ``Runner`` by its ``agent`` or an ``App`` by its ``root_agent``): each tool's name
    and its agent's name.

    Recognised by class name, as every ADK object is here (spec A-3), so nothing is imported.
    A sub-agent the ADK exposes as a tool (``mode="single_turn"``) is not among them: it runs
    inside the session, whose events nest under its call."""
    root = (
        agent
        if hasattr(agent, "sub_agents")
        else getattr(agent, "agent", None) or getattr(agent, "root_agent", None)
    )
    found: dict[str, str] = {}
    seen: set[int] = set()
    waiting = [root] if root is not None else []
    while waiting:
        current = waiting.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        children = list(getattr(current, "sub_agents", None) or ())
        for tool in getattr(current, "tools", None) or ():
            inner = getattr(tool, "agent", None)
            name = getattr(inner, "name", None)
            if _is_agent_tool(tool) and isinstance(name, str) and inner not in children:
                found[str(getattr(tool, "name", name))] = name
        waiting += children
    return found


def _is_agent_tool(tool: Any) -> bool:
    return any(
        cls.__name__ == "AgentTool" and cls.__module__.startswith("google.adk")
        for cls in type(tool).__mro__
    )


# --- reading -----------------------------------------------------------------------------

_SESSION_FIELDS: dict[str, str] = {
    "id": "session_id",
    "app_name": "app_name",
    "appName": "app_name",
    "user_id": "user_id",
    "userId": "user_id",
}


def read(source: Source, *, agent: Any = None) -> Transcript:
    """The events of ``source`` (a session, a list of events or one event), nested by branch;
    ``agent`` (the run's root agent or runner) names the tools that are agents."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = AdkBuilder(transcript, source.name, agent_tools=agent_tools(agent))
    document = source.document if source.is_document else None
    if isinstance(document, Mapping) and OTHER_OBJECT in document:
        _refuse(source, document[OTHER_OBJECT])
    if is_session(document):
        assert isinstance(document, Mapping)
        for key, value in document.items():
            _top_level(source, transcript, key, value)
        logged = _logged_responses(document.get("event_logs"))
        for line, event in enumerate(document["events"], start=1):
            _feed(source, builder, _with_logged(event, logged), line)
    else:
        for line, record in source.records():
            if isinstance(record, Mapping) and OTHER_OBJECT in record:
                _refuse(source, record[OTHER_OBJECT])
            _feed(source, builder, record, line)
    builder.finish()
    if not transcript.entries and builder.events_fed == 0:
        raise TranscriptFormatError(source.name, [NAME], None, "no ADK events")
    return transcript


def _logged_responses(logs: Any) -> dict[str, dict[str, Any]]:
    """A pre-release session's ``event_logs`` (December 2024): each model call's request and
    response beside the events, by the ``event_id`` of the event the response became. Its
    events record neither model nor usage; the logged response does (``model_version``,
    ``usage_metadata``), by the names a later event gives them."""
    found: dict[str, dict[str, Any]] = {}
    for log in logs if isinstance(logs, list) else ():
        response = log.get("model_response") if isinstance(log, Mapping) else None
        event_id = log.get("event_id") if isinstance(log, Mapping) else None
        if not isinstance(response, Mapping) or not isinstance(event_id, str):
            continue
        said = {k: response[k] for k in ("model_version", "usage_metadata") if response.get(k)}
        if said:
            found[event_id] = said
    return found


def _with_logged(event: Any, logged: Mapping[str, Mapping[str, Any]]) -> Any:
    """``event`` with the model and usage its logged response records, where it has none."""
    event_id = event.get("id") if logged and isinstance(event, Mapping) else None
    said = logged.get(event_id) if isinstance(event_id, str) else None
    if not said:
        return event
    return {**said, **{k: v for k, v in event.items() if v is not None}}


def _refuse(source: Source, kind: Any) -> None:
    raise TranscriptFormatError(
        source.name,
        [NAME],
        None,
        f"an ADK {kind} is not a session or its events; pass the Session "
        "(await runner.session_service.get_session(...)) or its .events",
    )


def _top_level(source: Source, transcript: Transcript, key: str, value: Any) -> None:
    metadata = transcript.metadata
    if key == "events":
        return  # accounted for one by one
    if key in _SESSION_FIELDS:
        if isinstance(value, str) and value:
            metadata[_SESSION_FIELDS[key]] = value
        source.mapped(key)
    elif key in ("last_update_time", "lastUpdateTime"):
        session = record_named("session", metadata.get("session_id"))
        moment = warned_unix_timestamp(value, source.warn, session, key)
        if moment is not None:
            metadata["updated_at"] = moment
        source.mapped("last_update_time")
    elif key == "state":
        scalars = {
            k: v
            for k, v in (value.items() if isinstance(value, Mapping) else ())
            if isinstance(v, (str, int, float, bool))
        }
        if scalars:
            metadata["state"] = scalars
        source.mapped("state")
    elif key == "event_logs":
        source.mapped("event_logs")  # read with the events (_logged_responses)
    else:
        source.ignored("other key")


def _feed(source: Source, builder: AdkBuilder, event: Any, line: int) -> None:
    if isinstance(event, MalformedLine) or not is_event(event):
        record = type_of_record(event)
        reason = event.reason if isinstance(event, MalformedLine) else "not an ADK event"
        source.warn(f"{reason}; skipped", line, record_type=record)
        return
    warnings = builder.transcript.warnings
    listed, warned = len(warnings), warning_count(warnings)
    kind = builder.feed(event, line)
    if warning_count(warnings) > warned:
        source.note(kind, "warned")
        source.take_warnings(warnings, line, start=listed)
    else:
        source.note(kind, "ignored" if kind in RECORDS.ignored else "mapped")


# --- following a run live (spec A-2) -------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RunStart:
    """What ``runner.run_async(...)`` (or ``runner.run``) was given that its events leave out:
    the ``Runner`` (the generator's ``self``), whose ``agent`` is the root agent, whose tree
    says which tools are agents (:func:`agent_tools`); the user's message (None when the run
    has none), which the runner stores in the session as the run's first event but yields
    only when asked (``yield_user_message``), and only for a root ``LlmAgent`` or workflow
    (another agent's run ignores it), so the first event tells; the session's id, app and
    user (the run's arguments, the runner's ``app_name``); and the generator itself, whose
    frames hold the session the run appends its events to (:func:`session_of_run`), except
    ``run``'s (a sync generator), whose ``run_async`` runs on a thread of its own: the
    runner's session service gives its session when the run is over (:func:`stored_session`)."""

    runner: Any
    message: Any
    session: Mapping[str, str] = dataclasses.field(default_factory=dict)
    events: Any = None


def run_of_generator(events: Any) -> RunStart | None:
    """What the runner's generator to follow was given (:class:`RunStart`). None for any other
    generator."""
    given = generator_arguments(events, "google.adk.runners")
    if given is None:
        return None
    message = given.get("new_message")
    if type(message).__name__ != "Content":
        message = None
    runner = given.get("self")
    named = {
        "session_id": given.get("session_id"),
        "app_name": getattr(runner, "app_name", None),
        "user_id": given.get("user_id"),
    }
    session = {k: v for k, v in named.items() if isinstance(v, str) and v}
    return RunStart(runner=runner, message=message, session=session, events=events)


#: How many generators down from ``run_async`` the session it runs in is a local: its own
#: frame for a root ``LlmAgent``, the node runner's for a workflow, the traced run's
#: (``_run_with_trace``, under ``stream_in_scope``) for another agent.
_SESSION_DEPTH = 4


def session_of_run(events: Any) -> Any:
    """The ``Session`` the runner's generator ``events`` runs in, as the run holds it now (the
    ADK appends the user's message to it, then each event it yields, and updates its state
    and time): a local ``session`` of the generator's frame or of the generator it iterates.
    None when the generator has ended, and for ``runner.run``, which runs ``run_async`` on a
    thread of its own."""
    current = events
    for _ in range(_SESSION_DEPTH):
        frame = getattr(current, "ag_frame", None) or getattr(current, "gi_frame", None)
        if frame is None:
            return None
        found = frame.f_locals
        session = found.get("session")
        if _is_session_object(session):
            return session
        current = next((v for v in found.values() if _is_generator(v)), None)
    return None


def stored_session(runner: Any, names: Mapping[str, str]) -> Any:
    """The session ``names`` (its id, app and user) as ``runner``'s session service stores it
    now: ``get_session`` run to its end on a thread of its own with an event loop of its own,
    as ``Runner.run`` runs ``run_async`` (the caller's thread may be running a loop already,
    a notebook's). None when the runner has no such service or it stores no such session;
    what the service raises is raised."""
    if _session_getter(runner, names) is None:
        return None
    import asyncio  # only here: asyncio imports ssl (issue 19)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="turnfold-adk-session") as pool:
        return pool.submit(asyncio.run, stored_session_async(runner, names)).result()


async def stored_session_async(runner: Any, names: Mapping[str, str]) -> Any:
    """:func:`stored_session` awaited on the running loop, the one ``run_async`` ran on: a
    service whose store belongs to that loop (an async database engine) is read there."""
    import inspect

    get = _session_getter(runner, names)
    if get is None:
        return None
    found = get(
        app_name=names["app_name"], user_id=names["user_id"], session_id=names["session_id"]
    )
    session = await found if inspect.isawaitable(found) else found
    return session if _is_session_object(session) else None


def _session_getter(runner: Any, names: Mapping[str, str]) -> Any:
    get = getattr(getattr(runner, "session_service", None), "get_session", None)
    if not callable(get) or not all(names.get(k) for k in ("app_name", "user_id", "session_id")):
        return None
    return get


def _is_generator(value: Any) -> bool:
    """A generator (sync or async) that has not ended: it has a frame to read."""
    return any(getattr(value, frame, None) is not None for frame in ("ag_frame", "gi_frame"))


def _is_session_object(value: Any) -> bool:
    """A ``Session`` of the ADK, by its type's module (spec A-3: nothing imported)."""
    kind = type(value)
    return (
        kind.__name__ == "Session"
        and kind.__module__.startswith("google.adk")
        and isinstance(getattr(value, "events", None), list)
    )


def _is_user_message(record: Any) -> bool:
    """A serialised event of the user's message (not of its state alone)."""
    return is_event(record) and record.get("author") == "user" and bool(record.get("content"))


def _recorded_message(session: Any, invocation_id: Any) -> Any:
    """The event the ADK recorded for the user's message of the invocation ``invocation_id``
    (``_build_and_append_user_event``: appended before the agent's first event, with its
    time): the last event of the user with content in that invocation (a resumed invocation
    holds the first message too). None when the session holds none."""
    if session is None or not isinstance(invocation_id, str):
        return None
    return next(
        (
            event
            for event in reversed(session.events)
            if getattr(event, "invocation_id", None) == invocation_id
            and getattr(event, "author", None) == "user"
            and getattr(event, "content", None) is not None
        ),
        None,
    )


class Follower:
    """``runner.run_async(...)``'s events followed into a transcript.

    Each event is fed as :func:`read` feeds a session's event, after the ADK's own
    serialization of it: a partial event grows its agent's text as it streams, and the final
    event of that response settles it (text, usage, calls). Calls are ``executing`` until their
    response arrives; at :meth:`close` those still open are ``unknown``, as a load leaves them
    (a long-running call runs on, and a client call asking the user waits for the answer).
    Following the runner's generator, the prompt it does not yield is the session's own event
    of it, and the session's fields are the metadata a load of the session reads; the events
    the runner appends to the session after its last yield (the summary of
    ``EventsCompactionConfig``, ``Runner._run_post_invocation_compaction``) are read from the
    session at :meth:`close`, as a load of the session shows them.
    """

    def __init__(self, transcript: Transcript, *, agent: Any = None) -> None:
        transcript.metadata.setdefault("source_format", NAME)
        self.transcript = transcript
        self.builder = AdkBuilder(transcript, "<follow>", live=True, agent_tools=agent_tools(agent))
        #: ``agent=`` names the tools that are agents, whatever the runner's tree says.
        self._agent_given = agent is not None
        self._line = 0
        #: The user's message not yet shown: shown with the first event, which says its
        #: invocation, or at the end.
        self._message: Any = None
        #: The session the run appends to, read at the run's end for its time and state.
        self._session: Any = None
        #: ``runner.run``'s runner and session names: its session is the service's, read
        #: when the run is over (its generator holds none); and that generator, closed when
        #: the user's loop leaves early (:meth:`broke_off`).
        self._stored: tuple[Any, Mapping[str, str]] | None = None
        self._run: Any = None
        #: ``run_async``'s runner and session names when its frames hold no session, and the
        #: session its service gave when the run was over (:meth:`read_end_async`).
        self._awaited: tuple[Any, Mapping[str, str]] | None = None
        self._read: Any = None
        #: How the run was stopped, when it was (:meth:`broke_off`): the stop's wording key.
        self._stopped: str | None = None
        #: The prompt shown as given, not as recorded (its session out of reach), and the
        #: invocation it was shown for: its recorded time is read at the end.
        self._untimed: tuple[UserMessage, Any] | None = None
        #: The ids of the events shown: the session's events after the last of them are
        #: those the runner never yielded.
        self._shown: set[str] = set()

    def begin(self, start: RunStart) -> None:
        """What the runner's generator was given (:func:`run_of_generator`), before its first
        event: its runner's agent tree, unless ``agent=`` gave one, the session's id, app and
        user, and the user's message ``run_async`` does not yield, shown first, as the
        session's own user event is."""
        if not self._agent_given:
            self.builder.agent_tools = agent_tools(start.runner)
        self.transcript.metadata.update(start.session)
        # Told at the first event: the run has appended the user's message to its session.
        self._session = session_of_run(start.events)
        if self._session is None and getattr(start.events, "gi_frame", None) is not None:
            self._stored, self._run = (start.runner, start.session), start.events
        elif self._session is None:
            self._awaited = (start.runner, start.session)
        self._message = start.message

    def _show_message(self, invocation_id: Any) -> None:
        """The user's message as the session recorded it in ``invocation_id`` (its time, its
        parts as stored), as a load of the session shows it; as given when the session is
        out of reach."""
        message, self._message = self._message, None
        recorded = _recorded_message(self._session, invocation_id)
        if recorded is not None:
            self._shown.add(str(recorded.id))
            self.builder.feed(plain(recorded), 0)
            return
        shown = len(self.transcript.entries)
        self.builder.feed({"author": "user", "content": _dump(message)}, 0)
        prompt = self.transcript.entries[shown:]
        if prompt and isinstance(prompt[0], UserMessage):
            self._untimed = (prompt[0], invocation_id)

    def feed(self, event: Any) -> None:
        self._line += 1
        record = plain(event)
        if self._message is not None:
            if _is_user_message(record):
                self._message = None  # the runner yields it (yield_user_message)
            else:
                self._show_message(field(record, "invocation_id"))
        if not is_event(record):
            self.builder.warn(f"a {type(event).__name__} is not an ADK event; skipped", self._line)
            return
        event_id = record.get("id")
        if isinstance(event_id, str) and event_id and record.get("partial") is not True:
            self._shown.add(event_id)
        self.builder.feed(record, self._line)

    async def read_end_async(self) -> None:
        """``run_async``'s session when its frames held none (:func:`session_of_run`): read
        from the runner's session service when the run is over, awaited on the loop that ran
        it (:class:`~turnfold.following.Follow` awaits this before it closes the follower),
        for what :meth:`close` reads off a session: the prompt's time, the events appended
        after the last yielded (a compaction), the update time and the state."""
        if self._awaited is None:
            return
        runner, names = self._awaited
        try:
            self._read = await stored_session_async(runner, names)
        except Exception as exc:
            self._unread(names, exc)

    def broke_off(self, exc: BaseException) -> bool:
        """The user's loop left the followed run early (``break``; for ``run_async``, then
        the ``aclose()`` of the ``async for``'s generator, which the event loop calls when it
        drops it), or a Ctrl-C or a cancel stopped it: :meth:`close` shows it stopped, the
        calls it left open cancelled, after what the session holds of it (a stop said by
        ``follow`` before :meth:`close` would come before the events read there). A followed
        ``runner.run`` goes on, on the ADK's thread, appending to the session while
        :meth:`close` would read it: it is stopped as the ADK stops a run its caller leaves,
        its generator closed, which cancels the invocation and waits for its thread
        (``Runner.run``; a no-op when the interrupt came through it and it ended so).
        ``run_async``'s generator runs only as far as it is iterated, so once left it stays
        where it was. True when it was so; any other exception is ``follow``'s to say."""
        if isinstance(exc, GeneratorExit):
            self._stopped = "reader.stopped_by_user"
        elif is_interrupt(exc):
            self._stopped = "reader.interrupted"
        else:
            return False
        run, self._run = self._run, None
        if run is not None:
            run.close()
        return True

    def close(self) -> None:
        if self._message is not None:
            self._show_message(None)
        session = self._session
        if self._stored is not None:
            session = self._stored_session(*self._stored)
        elif self._awaited is not None:
            session = self._read
        if session is not None:
            self._time_prompt(session)
            self._unyielded(session)
        if self._stopped:
            for call in self.builder.open.values():
                self.builder.update(call, status="cancelled")
            self.builder.open.clear()
        self.builder.finish()
        if self._stopped:
            self.transcript.append(stop(self._stopped))
        if session is not None:
            self._session_fields(session)

    def _stored_session(self, runner: Any, names: Mapping[str, str]) -> Any:
        """``runner.run``'s session, over now, from the runner's session service
        (:func:`stored_session`); a service that fails is warned of, and the run is shown as
        followed."""
        try:
            return stored_session(runner, names)
        except Exception as exc:
            self._unread(names, exc)
            return None

    def _unread(self, names: Mapping[str, str], exc: Exception) -> None:
        self.builder.warn(
            f"the session {names.get('session_id')!r} could not be read from the runner's "
            f"session service ({type(exc).__name__}: {exc}): the prompt has no time and the "
            "session's state is not shown",
            None,
        )

    def _time_prompt(self, session: Any) -> None:
        """The prompt shown as given takes the time the session recorded for it."""
        if self._untimed is None:
            return
        prompt, invocation_id = self._untimed
        recorded = _recorded_message(session, invocation_id)
        timestamp = unix_timestamp(getattr(recorded, "timestamp", None))
        if timestamp is not None:
            self.transcript.update(prompt, timestamp=timestamp)
            self._shown.add(str(recorded.id))

    def _unyielded(self, session: Any) -> None:
        """The events the runner appended after the last one it yielded (a summary of the
        invocation, appended when it is over), fed as if yielded: none of them is in the
        stream. Nothing is fed when no event shown is in the session (it is not this run's)."""
        events = getattr(session, "events", None)
        events = events if isinstance(events, list) else []
        last = max(
            (n for n, event in enumerate(events) if getattr(event, "id", None) in self._shown),
            default=None,
        )
        if last is None:
            return
        for event in events[last + 1 :]:
            if getattr(event, "id", None) not in self._shown:
                self.feed(event)

    def _session_fields(self, session: Any) -> None:
        """The session's update time and state once the run is over, as a load of it reads
        them; ``temp:`` state lives only in the run's copy of the session (the ADK stores none
        of it, ``_trim_temp_delta_state``)."""
        state = getattr(session, "state", None)
        stored = {
            k: v
            for k, v in (state.items() if isinstance(state, Mapping) else ())
            if not str(k).startswith("temp:")
        }
        fields = {"last_update_time": getattr(session, "last_update_time", None), "state": stored}
        source = Source("<follow>", iter(()))
        for key, value in fields.items():
            _top_level(source, self.transcript, key, value)


RECORDS = Records(
    mapped={
        "user": "UserMessage (text; inline data as its images)",
        "model": "Thinking (thought parts), AssistantText (text, model_version, usage), "
        "ToolCall (function_call; executable_code as code_execution), in part order; "
        "a client call asking the user left open → confirming, PendingAction; "
        "inline or file data the model returned → SystemNotice",
        "function_response": "settles each call with its id: error for a response holding "
        "`error`, else success (the ADK's own signal); a long-running call's interim response "
        "(the agent's) leaves it executing, the client's settles it (earlier responses in "
        "meta['interim_responses']); transfer_to_agent → SubAgent of the "
        "agent handed to, holding its events until control leaves it (its closing text, the "
        "turn's answer, stays at the top level); a transfer no call explains → SystemNotice",
        "error": "error_code/error_message: the agent's open calls become error (a tool's "
        "exception), and an AssistantError naming them when nothing of the invocation follows "
        "(the exception ended the run); with none open, AssistantError",
        "actions": "an event of actions alone: a transfer no call explains → SystemNotice, "
        "escalate → SystemNotice, compaction → CompactionBoundary",
        "output": "a workflow node's output without content → SystemNotice",
        "id": 'metadata["session_id"]',
        "app_name": 'metadata["app_name"]',
        "appName": 'metadata["app_name"] (by_alias spelling)',
        "user_id": 'metadata["user_id"]',
        "userId": 'metadata["user_id"] (by_alias spelling)',
        "last_update_time": 'metadata["updated_at"] (ISO-8601)',
        "state": 'its scalar values → metadata["state"]',
        "event_logs": "a pre-release session's logged model responses: the model_version and "
        "usage_metadata of the event each became (by event_id)",
    },
    ignored={
        "partial": "a streamed chunk: the final event of the response repeats its text",
        "state_delta": "an event of state bookkeeping alone; the session's state holds the result",
        "agent_state": "a workflow agent's resume state or end marker",
        "other key": "other session fields",
    },
)
