"""The OpenAI Agents SDK's run items (spec A-1, issue 13, issue 22): a saved run state
(``RunState.to_json()`` / ``to_string()``, ``RunResult.to_state()``) or a list of run items.

``RunResult.to_input_list()`` is a plain Responses item list and is read by
``openai-responses``; the run items add what that list loses: which agent wrote each item,
the handoffs between agents, and usage per model response.

Input shapes: a document with ``generated_items`` (the run state; its ``new_items`` spelling
too), or a bare list of serialised run items ``{type: "*_item", agent: {name}, raw_item}``.
``load`` turns Python objects into dicts of their fields, so a ``RunResult`` (``new_items``,
``raw_responses``, ``input``, ``final_output``) and a list of ``RunItem`` objects read the same
way; their private fields (the agents themselves, resume bookkeeping) are left out.

Mapping (each item's ``raw_item`` is a Responses item, converted by
:class:`~turnfold.formats.openai_responses.ResponsesBuilder`):

- ``message_output_item`` → :class:`AssistantText` with the agent's name in ``meta["agent"]``;
  ``reasoning_item`` → :class:`Thinking`;
- ``tool_call_item`` → :class:`ToolCall` (``arguments`` parsed; the tool's ``description``
  and ``tool_origin`` in ``meta``; an ``agent_as_tool`` origin makes it a sub-agent whose
  steps the state does not hold); ``tool_call_output_item`` settles the call with the same
  ``call_id``. The SDK records no error flag: a failed tool's output is the text of its
  ``failure_error_function``, so the default one's fixed text (``An error occurred while
  running the tool…``) makes the call ``error``; any other output leaves it ``unknown``
  (spec L-3);
- ``handoff_call_item`` → a :class:`ToolCall` with a :class:`SubAgent` naming the agent it
  hands off to (category agent); ``handoff_output_item`` settles it ``success`` and adds a
  :class:`SystemNotice` (subtype ``handoff``) naming the new agent. An agent change without
  a handoff item (a resumed state) gets a notice too (subtype ``agent``);
- ``tool_approval_item`` → :class:`PendingAction` (a call waiting for approval);
  ``input_item``, ``compaction_item`` and the tool-search items → their Responses item;
  MCP listing and approval items are bookkeeping and left out (as in ``openai-responses``);
- ``original_input`` (a ``RunResult``'s ``input``) → the prompt (a string, or Responses input
  items); a ``RunResult``'s ``final_output`` → ``metadata["final_output"]``;
- ``model_responses[i].usage`` → the usage of that response's last text (else
  ``meta["usage"]`` of its first entry); its ``response_id`` is the batch of its calls;
  ``context.usage`` → ``metadata["usage"]``; ``current_agent`` → ``metadata["agent"]``.

The state records no model name and no timestamps, so neither is shown (L-3).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import NameSet, as_int, text_result
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.gemini_parts import attach_usage
from turnfold.formats.openai_responses import ResponsesBuilder, output_content
from turnfold.formats.source import Source, plain_value, type_of_record
from turnfold.formats.wrappers import sample
from turnfold.model import (
    Entry,
    PendingAction,
    SubAgent,
    SystemNotice,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
)

NAME = "openai-agents"

#: Run item types whose ``raw_item`` is a Responses item the Responses builder reads.
RESPONSES_ITEMS = NameSet(
    {
        "message_output_item",
        "reasoning_item",
        "tool_call_item",
        "tool_call_output_item",
        "tool_search_call_item",
        "tool_search_output_item",
        "compaction_item",
        "input_item",
    }
)
HANDOFF_ITEMS = NameSet({"handoff_call_item", "handoff_output_item"})
#: Bookkeeping without a step of the conversation (the Responses loader skips them too).
_SILENT = ("mcp_list_tools_item", "mcp_approval_request_item", "mcp_approval_response_item")
SILENT_ITEMS = NameSet(_SILENT)
RUN_ITEMS = NameSet(RESPONSES_ITEMS | HANDOFF_ITEMS | SILENT_ITEMS | {"tool_approval_item"})
_OUTPUT_ITEMS = NameSet({"tool_call_output_item", "handoff_output_item", "tool_search_output_item"})
#: The document keys that hold the run items, the run state's name first (``new_items`` is
#: ``RunResult``'s, which ``load`` turns into a dict of its fields).
ITEM_KEYS = ("generated_items", "new_items")
#: The keys of the model responses: the run state's, then ``RunResult``'s.
RESPONSE_KEYS = ("model_responses", "raw_responses")

#: ``agents.tool.default_tool_error_function``'s text (0.24: the sentence alone; older
#: releases appended ``Error: <exception>``): the only sign in the state that a tool failed.
DEFAULT_TOOL_ERROR = "An error occurred while running the tool."

#: Run-state keys read into the transcript; every other known key is resume bookkeeping.
_IGNORED_KEYS: dict[str, str] = {
    "session_items": "the generated items again, as persisted to a session",
    "last_model_response": "a copy of the last of model_responses",
    "last_processed_response": "the last response's parsed tool runs, to resume from",
    "pending_input": "input queued for the next turn of a resumed run",
    "current_step": "the interruption a resumed run continues from",
    "tool_use_tracker": "which tools each agent used, for tool_choice on resume",
    "generated_session_item_indexes": "indexes into session_items",
    "nested_history_owned_session_item_refs": "session bookkeeping",
    "current_response_generated_item_ownership": "session bookkeeping",
    "current_turn_persisted_item_count": "session bookkeeping",
    "pending_session_write": "session bookkeeping",
    "input_guardrail_results": "guardrail verdicts",
    "output_guardrail_results": "guardrail verdicts",
    "tool_input_guardrail_results": "guardrail verdicts",
    "tool_output_guardrail_results": "guardrail verdicts",
    "trace": "the trace's ids, to continue it on resume",
    "sandbox": "the sandbox session's state",
    "no_active_agent_run": "a resume flag",
    "terminal_unrecoverable": "a resume flag",
    "auto_previous_response_id": "a resume setting",
    "generated_prompt_cache_key": "a resume setting",
    "reasoning_item_id_policy": "a resume setting",
}
#: Scalars of the state kept in metadata under their own names (any other scalar key too).
_METADATA_KEYS = NameSet({"current_turn", "max_turns", "conversation_id", "previous_response_id"})


# --- detection ---------------------------------------------------------------------------


def is_run_item(value: Any) -> bool:
    """A serialised run item: a ``*_item`` type the SDK writes and a ``raw_item``."""
    return (
        isinstance(value, Mapping)
        and value.get("type") in RUN_ITEMS
        and "raw_item" in value
        and isinstance(value.get("agent"), (Mapping, type(None)))
    )


def _classify(value: Any) -> int:
    return DISTINCTIVE if is_run_item(value) else NOT_MINE


def _item_list(document: Any) -> tuple[str, list[Any]] | None:
    if not isinstance(document, Mapping):
        return None
    for key in ITEM_KEYS:
        items = document.get(key)
        if isinstance(items, list):
            return key, items
    return None


def detect(source: Source) -> Evidence:
    """A document whose ``generated_items`` / ``new_items`` are run items, or a list of them.

    The ``*_item`` types with a ``raw_item`` are marks only the Agents SDK writes, so its state
    never reads as the Responses items inside it."""
    document = source.document if source.is_document else None
    found = _item_list(document)
    if found is not None:
        items = sample(found[1])
        if items and not any(is_run_item(i) for i in items):
            return Evidence.none(f"{found[0]} holds no run items")
        marks = sum(1 for i in items if is_run_item(i))
        return Evidence(share=1.0, marks=marks + 1)  # +1: the state document itself
    if isinstance(document, Mapping):
        return Evidence.none("no generated_items or new_items")
    return Evidence.of(source.head_values(), _classify, "no run item (type *_item, raw_item)")


# --- the builder -------------------------------------------------------------------------


class AgentsBuilder(ResponsesBuilder):
    """A :class:`ResponsesBuilder` that knows which agent wrote each item and reads the
    SDK's default tool-error text as a failure."""

    def __init__(self, transcript: Transcript, source_name: str, *, live: bool = False) -> None:
        super().__init__(transcript, source_name, live=live)
        #: The agent whose items are being fed (``agent.name`` of the current item).
        self.agent: str | None = None
        self._handoffs: set[str] = set()

    def add_assistant(
        self, text: str, timestamp: str | None, meta: dict[str, Any], line: int, origin: str
    ) -> None:
        if self.agent is not None:
            meta = {**meta, "agent": self.agent}
        super().add_assistant(text, timestamp, meta, line, origin)

    def start_call(self, *args: Any, **kwargs: Any) -> ToolCall:
        call = super().start_call(*args, **kwargs)
        if self.agent is not None:
            call.meta["agent"] = self.agent
        return call

    def outcome(self, call: ToolCall, value: Any) -> tuple[ToolStatus, ToolResult, dict[str, Any]]:
        status, result, changes = super().outcome(call, value)
        if isinstance(value, str) and value.startswith(DEFAULT_TOOL_ERROR):
            status = "error"
        return status, result, changes

    def switch_agent(self, name: str | None, line: int) -> None:
        """The item's agent; a change no handoff announced gets a notice of its own."""
        if name is None or name == self.agent:
            return
        if self.agent is not None:
            self._append(SystemNotice(text=f"Agent: {name}", subtype="agent"))
        self.agent = name

    def handoff_call(self, item: Mapping[str, Any], line: int) -> ToolCall | None:
        raw = item.get("raw_item")
        if not isinstance(raw, Mapping) or not self.feed_item(raw, line):
            return None
        call = self._calls.get(str(raw.get("call_id") or raw.get("id") or ""))
        if call is not None:
            self._handoffs.add(call.call_id)
            self.transcript.update(call, subagent=SubAgent(name=_handoff_target(call.name)))
        return call

    def handoff_output(self, item: Mapping[str, Any], line: int) -> bool:
        """Settle the handoff call and announce the new agent; False when unreadable."""
        raw = item.get("raw_item")
        target = _agent_name(item.get("target_agent"))
        source_agent = _agent_name(item.get("source_agent")) or self.agent
        if not isinstance(raw, Mapping) or target is None:
            return False
        call_id = raw.get("call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"handoff output for an unknown call id {call_id!r}", line)
        else:
            text, images = output_content(raw.get("output"))
            self._open.pop(call.call_id, None)
            self.transcript.update(
                call,
                status="success",
                result=text_result(text, images=images),
                subagent=SubAgent(name=target, task=f"handoff from {source_agent}"),
            )
        self.close_batch()
        self._append(SystemNotice(text=f"Handed off to {target}", subtype="handoff"))
        self.agent = target
        return True

    def approval(self, item: Mapping[str, Any], line: int) -> bool:
        raw = item.get("raw_item")
        if not isinstance(raw, Mapping):
            return False
        name = item.get("tool_name") or raw.get("name") or "tool"
        call_id = raw.get("call_id") or raw.get("id")
        self._append(
            PendingAction(
                action="permission",
                text=f"Approve {name}?",
                call_id=call_id if isinstance(call_id, str) else None,
                meta={"agent": self.agent} if self.agent else {},
            )
        )
        return True


def _agent_name(value: Any) -> str | None:
    name = value.get("name") if isinstance(value, Mapping) else None
    return name if isinstance(name, str) and name else None


def _handoff_target(tool_name: str) -> str | None:
    """The agent a ``transfer_to_<agent>`` handoff tool names (the SDK's default tool name)."""
    prefix = "transfer_to_"
    if not tool_name.startswith(prefix):
        return None
    return tool_name[len(prefix) :] or None


# --- usage -------------------------------------------------------------------------------


def _first(value: Any) -> Any:
    """The SDK serialises token details as a one-element list; older states as an object."""
    return value[0] if isinstance(value, list) and value else value


def agents_usage(raw: Any) -> Usage | None:
    """``agents.usage.serialize_usage`` output as a :class:`Usage`."""
    if not isinstance(raw, Mapping):
        return None
    inputs = _first(raw.get("input_tokens_details"))
    outputs = _first(raw.get("output_tokens_details"))
    inputs = inputs if isinstance(inputs, Mapping) else {}
    outputs = outputs if isinstance(outputs, Mapping) else {}
    usage = Usage(
        input_tokens=as_int(raw.get("input_tokens")),
        output_tokens=as_int(raw.get("output_tokens")),
        cache_read_tokens=as_int(inputs.get("cached_tokens")),
        cache_write_tokens=as_int(inputs.get("cache_write_tokens")),
        reasoning_tokens=as_int(outputs.get("reasoning_tokens")),
    )
    return None if usage == Usage() else usage


def _raw_keys(raw: Any) -> list[str]:
    if not isinstance(raw, Mapping):
        return []
    keys = []
    for key in ("id", "call_id"):
        value = raw.get(key)
        if isinstance(value, str) and value:
            keys.append(f"{raw.get('type')}:{value}")
    return keys


class _Responses:
    """Which model response produced each output item (by its type and id), so an item's
    entries join that response's usage and batch."""

    def __init__(self, responses: Any) -> None:
        self.owner: dict[str, int] = {}
        self.ids: list[str] = []
        self.usages: list[Usage | None] = []
        self.entries: list[list[Entry]] = []
        for response in responses if isinstance(responses, list) else []:
            response = response if isinstance(response, Mapping) else {}
            self.add(response.get("response_id"), response.get("usage"), response.get("output"))

    def of(self, raw: Any) -> int | None:
        return next((self.owner[k] for k in _raw_keys(raw) if k in self.owner), None)

    def add(self, response_id: Any, usage: Any, output: Any) -> None:
        """One more model response, as a live stream completes it."""
        index = len(self.ids)
        self.ids.append(
            response_id if isinstance(response_id, str) and response_id else f"resp-{index}"
        )
        self.usages.append(agents_usage(usage))
        self.entries.append([])
        for raw in output if isinstance(output, list) else []:
            for key in _raw_keys(raw):
                self.owner.setdefault(key, index)

    def attach(self, transcript: Transcript | None = None) -> None:
        for entries, usage in zip(self.entries, self.usages, strict=True):
            attach_usage(entries, usage, transcript)


# --- run objects (spec A-1) -----------------------------------------------------------------

#: Fields of a run item that hold an agent: only its name is read, and copying the agent
#: itself (its tools, MCP connections, locks) would be slow or impossible.
_AGENT_FIELDS = ("agent", "source_agent", "target_agent")


def _agent_ref(agent: Any) -> dict[str, Any] | None:
    name = getattr(agent, "name", None)
    return {"name": name} if isinstance(name, str) else None


def plain_item(item: Any) -> Any:
    """A ``RunItem`` object as the SDK's saved state writes it: its fields, each agent by
    its name alone."""
    if not dataclasses.is_dataclass(item) or isinstance(item, type):
        return plain_value(item)
    out: dict[str, Any] = {}
    for field in dataclasses.fields(item):
        if field.name.startswith("_"):  # the SDK's own references (a weakref to the agent)
            continue
        value = getattr(item, field.name, None)
        out[field.name] = _agent_ref(value) if field.name in _AGENT_FIELDS else plain_value(value)
    return out


def _plain_response(response: Any) -> dict[str, Any]:
    """A ``ModelResponse`` as far as :func:`read` reads it: its id, usage and which items it
    produced (their items themselves are the run items)."""
    output = []
    for item in getattr(response, "output", None) or []:
        ids = {k: getattr(item, k, None) for k in ("type", "id", "call_id")}
        output.append({k: v for k, v in ids.items() if isinstance(v, str)})
    return {
        "response_id": getattr(response, "response_id", None),
        "usage": plain_value(getattr(response, "usage", None)),
        "output": output,
    }


def plain(value: Any) -> Any:
    """A ``RunResult`` (or ``RunResultStreaming``), a ``RunState`` or a list of run items as
    the records :func:`read` reads: the fields a transcript shows, never the agents
    themselves or the user's run context."""
    if isinstance(value, (list, tuple)):
        return [plain_item(item) for item in value]
    if hasattr(value, "new_items") and hasattr(value, "raw_responses"):
        out: dict[str, Any] = {
            "input": plain_value(getattr(value, "input", None)),
            "new_items": [plain_item(item) for item in value.new_items],
            "raw_responses": [_plain_response(response) for response in value.raw_responses],
            "final_output": plain_value(getattr(value, "final_output", None)),
        }
        usage = getattr(getattr(value, "context_wrapper", None), "usage", None)
        if usage is not None:
            out["context_wrapper"] = {"usage": plain_value(usage)}
        last = _agent_ref(getattr(value, "last_agent", None))
        if last is not None:
            out["_last_agent"] = last
        return out
    to_json = getattr(value, "to_json", None)
    if callable(to_json):  # a RunState: its own serialization
        return plain_value(to_json())
    return plain_item(value)


# --- reading -----------------------------------------------------------------------------


def read(source: Source) -> Transcript:
    """The run items of ``source`` (a run state or a list of run items), with the state's
    prompt, usage per response and current agent."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = AgentsBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    found = _item_list(document)
    if isinstance(document, Mapping) and found is not None:
        responses = _Responses(next((document[k] for k in RESPONSE_KEYS if k in document), None))
        for key, value in document.items():
            _top_level(source, builder, key, value)
        for line, item in enumerate(found[1], start=1):
            _feed(source, builder, item, line, responses)
        responses.attach()
    else:
        responses = _Responses(None)
        for line, item in source.records():
            _feed(source, builder, item, line, responses)
    if not transcript.entries and builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], None, "no run items")
    return transcript


def _top_level(source: Source, builder: AgentsBuilder, key: str, value: Any) -> None:
    """One key of a run state (or of a ``RunResult`` turned into a dict), accounted for by
    its name (:data:`RECORDS`)."""
    metadata = builder.transcript.metadata
    if key in ITEM_KEYS:
        return  # its items are accounted for one by one
    if key in ("original_input", "input"):
        _original_input(builder, value)
    elif key in RESPONSE_KEYS:
        pass  # read before the items (:class:`_Responses`): usage and batches
    elif key in ("context", "context_wrapper"):
        usage = value.get("usage") if isinstance(value, Mapping) else None
        totals = {
            k: usage[k]
            for k in ("requests", "input_tokens", "output_tokens", "total_tokens")
            if isinstance(usage, Mapping) and as_int(usage.get(k)) is not None
        }
        if totals:
            metadata["usage"] = totals
    elif key in ("current_agent", "_last_agent"):
        name = _agent_name(value)
        if name:
            metadata["agent"] = name
    elif key == "final_output":
        if value is not None:
            metadata["final_output"] = value
    elif key == "$schemaVersion":
        metadata["schema_version"] = value
    elif key in _IGNORED_KEYS:
        source.ignored(key)
        return
    elif key.startswith("_"):
        source.ignored("(private field)")
        return
    elif key in _METADATA_KEYS or isinstance(value, (str, int, float, bool, type(None))):
        if value is not None:
            metadata.setdefault(key, value)
        source.mapped("other key")
        return
    else:
        source.ignored("other state")
        return
    source.mapped(key)


def _original_input(builder: AgentsBuilder, value: Any) -> None:
    if isinstance(value, str):
        builder.add_user(value, {}, None, 0, "item")
    elif isinstance(value, list):
        for item in value:
            if not isinstance(item, Mapping) or not builder.feed_item(item, 0):
                kind = item.get("type") if isinstance(item, Mapping) else None
                builder.warn(f"original_input item of unknown type {kind!r} skipped", None)


def _feed(
    source: Source, builder: AgentsBuilder, item: Any, line: int, responses: _Responses
) -> None:
    """One run item: the entries of its ``raw_item``, in its agent's name."""
    kind = item.get("type") if isinstance(item, Mapping) else None
    if not isinstance(item, Mapping) or kind not in RUN_ITEMS:
        record = kind if isinstance(kind, str) else type_of_record(item)
        source.warn(f"run item {record!r} skipped", line, record_type=record)
        return
    record = str(kind)
    builder.switch_agent(_agent_name(item.get("agent")), line)
    raw = item.get("raw_item")
    # An output item is input to the next response, which never lists it among its outputs.
    index = None if kind in _OUTPUT_ITEMS else responses.of(raw)
    before = len(builder.transcript.entries)
    warned = len(builder.transcript.warnings)
    builder._response_batch = responses.ids[index] if index is not None else None
    try:
        ok = _feed_item(builder, record, item, raw, line)
    finally:
        builder._response_batch = None
    if index is not None:
        responses.entries[index].extend(builder.transcript.entries[before:])
    if not ok:
        raw_type = raw.get("type") if isinstance(raw, Mapping) else None
        reason = (
            f"{record} of Responses type {raw_type!r} not read, skipped"
            if isinstance(raw_type, str)
            else f"{record} without a readable raw_item skipped"
        )
        source.warn(reason, line, record_type=record)
    elif len(builder.transcript.warnings) > warned:
        source.note(record, "warned")
    else:
        source.note(record, "ignored" if record in SILENT_ITEMS else "mapped")


def _feed_item(
    builder: AgentsBuilder, kind: str, item: Mapping[str, Any], raw: Any, line: int
) -> bool:
    if kind == "handoff_call_item":
        return builder.handoff_call(item, line) is not None
    if kind == "handoff_output_item":
        return builder.handoff_output(item, line)
    if kind == "tool_approval_item":
        return builder.approval(item, line)
    if kind in SILENT_ITEMS:
        return True
    if not isinstance(raw, Mapping):
        return False
    calls = len(builder._calls)
    if not builder.feed_item(raw, line):
        return False
    if kind == "tool_call_item" and len(builder._calls) > calls:
        call = next(reversed(builder._calls.values()))
        _call_meta(builder, call, item)
    return True


def _call_meta(builder: AgentsBuilder, call: ToolCall, item: Mapping[str, Any]) -> None:
    """A tool's description and origin; an agent used as a tool is a sub-agent whose steps
    the state does not hold (``as_tool()`` runs are absent from the items)."""
    description = item.get("description")
    if isinstance(description, str) and description:
        call.meta["tool_description"] = description
    origin = item.get("tool_origin")
    if isinstance(origin, Mapping):
        call.meta["tool_origin"] = dict(origin)
        if origin.get("type") == "agent_as_tool":
            name = origin.get("agent_name")
            name = name if isinstance(name, str) and name else call.name
            builder.transcript.update(call, subagent=SubAgent(name=name, steps_missing=True))


# --- following a run live (spec A-2) -------------------------------------------------------


def events_of(run: Any) -> Any:
    """The events of a ``RunResultStreaming`` (None for any other object)."""
    stream = getattr(run, "stream_events", None)
    return stream() if callable(stream) else None


class Follower:
    """``Runner.run_streamed(...).stream_events()`` followed into a transcript.

    Each ``RunItemStreamEvent`` carries the run item ``RunResult.new_items`` will hold, fed as
    :func:`read` feeds it; a ``raw_response_event`` whose data completes a model response gives
    that response's id and usage (read from ``raw_responses`` by a load), so its items join the
    same batch and its usage the same text. Text is shown when its message item arrives, not
    token by token; agent switches are told by the items' agents, as in a load.
    """

    def __init__(self, transcript: Transcript) -> None:
        transcript.metadata.setdefault("source_format", NAME)
        self.transcript = transcript
        self.builder = AgentsBuilder(transcript, "<follow>", live=True)
        self.source = Source("<follow>", iter(()))
        self.responses = _Responses(None)
        self._attached = 0
        self._line = 0

    def begin(self, run: Any) -> None:
        """The streamed run itself (``follow(Runner.run_streamed(...))``): its input, which no
        event carries."""
        _original_input(self.builder, plain_value(getattr(run, "input", None)))

    def feed(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "run_item_stream_event":
            self._line += 1
            warned = len(self.source.warnings)
            _feed(self.source, self.builder, plain_item(event.item), self._line, self.responses)
            self.transcript.warnings.extend(self.source.warnings[warned:])
        elif kind == "raw_response_event":
            data = getattr(event, "data", None)
            if getattr(data, "type", None) == "response.completed":
                response = getattr(data, "response", None)
                self._settle_responses()
                self.responses.add(
                    getattr(response, "id", None),
                    plain_value(getattr(response, "usage", None)),
                    plain_value(getattr(response, "output", None)),
                )
        # agent_updated_stream_event: the next item's agent tells the switch, as in a load

    def _settle_responses(self) -> None:
        """Usage of the responses whose items have all arrived (every earlier one)."""
        done = len(self.responses.ids)
        for index in range(self._attached, done):
            attach_usage(
                self.responses.entries[index], self.responses.usages[index], self.transcript
            )
        self._attached = done

    def close(self) -> None:
        self._settle_responses()
        for call in list(self.builder._open.values()):  # a load leaves them unknown (L-3)
            self.transcript.update(call, status="unknown")
        self.builder._open.clear()


_ITEM_DOC = "its raw_item as a Responses item (see openai-responses), in its agent's name"
RECORDS = Records(
    mapped={
        "message_output_item": "AssistantText, meta['agent'] = the agent's name",
        "reasoning_item": "Thinking (raw text, summary or encrypted)",
        "tool_call_item": "ToolCall with parsed arguments, description and tool_origin in meta",
        "tool_call_output_item": "settles the call with its call_id (error for the SDK's "
        "default tool-error text, else unknown)",
        "handoff_call_item": "ToolCall with a SubAgent naming the agent handed off to",
        "handoff_output_item": "settles the handoff call (success); SystemNotice naming the "
        "new agent",
        "tool_approval_item": "PendingAction (a call waiting for approval)",
        "tool_search_call_item": _ITEM_DOC,
        "tool_search_output_item": _ITEM_DOC,
        "compaction_item": "CompactionBoundary",
        "input_item": _ITEM_DOC,
        "original_input": "the prompt (UserMessage) or the input items",
        "input": "a RunResult's input: as original_input",
        "model_responses": "usage per response on its last text; response_id as its batch",
        "raw_responses": "a RunResult's model responses: as model_responses",
        "context": 'the run\'s total usage: metadata["usage"]',
        "context_wrapper": "a RunResult's context: as context",
        "current_agent": 'metadata["agent"]',
        "_last_agent": 'a RunResult\'s last agent: metadata["agent"]',
        "final_output": 'a RunResult\'s final output: metadata["final_output"]',
        "$schemaVersion": 'metadata["schema_version"]',
        "other key": "other top-level scalars: kept in metadata under their names",
    },
    ignored={
        **dict.fromkeys(_SILENT, "MCP bookkeeping, no step of the conversation"),
        **_IGNORED_KEYS,
        "(private field)": "a RunResult's private fields (agents, resume bookkeeping)",
        "other state": "other objects of the state (guardrails, interruptions, settings)",
    },
)
