"""Codex ``exec --json`` events (spec H-5): what ``codex exec --json`` prints, one event a line.

Not the rollout files Codex keeps in ``~/.codex/sessions`` (the ``codex`` format): these are
the thread events of ``codex-rs/exec/src/exec_events.rs``:

- ``thread.started {thread_id}`` → metadata ``session_id``, ``agent`` ``codex``; it begins a
  process's events, whose item ids (``item_0``…) are that process's own (a resumed run's
  stream appended to the first one's numbers its items again);
- ``item.started`` / ``item.updated`` / ``item.completed {item: {id, type, …}}``: an item is one
  entry, made when it is first seen and updated by the later events of its ``id``. Record types
  are ``item/<type>``:

  ================================  ========================================================
  item                              entry
  ================================  ========================================================
  ``agent_message {text}``          :class:`~turnfold.model.AssistantText`
  ``reasoning {text}``              :class:`~turnfold.model.Thinking` (a summary)
  ``plan {text}``                   :class:`~turnfold.model.AssistantText` (``meta["plan"]``)
  ``command_execution``             ``exec_command`` call: ``command``, ``aggregated_output``
                                    as its result; status from ``status`` and ``exit_code``
  ``file_change {changes}``         ``apply_patch`` call naming the changed paths
  ``mcp_tool_call``                 ``mcp__<server>__<tool>`` call, its result or error
  ``collab_tool_call``              ``spawn_agent`` / ``send_input`` / ``wait`` /
                                    ``close_agent`` call; a spawned agent is a sub-agent whose
                                    steps the stream does not hold (its thread's own events
                                    are not printed), its last message the call's result
  ``web_search {query}``            ``web_search`` call
  ``todo_list {items}``             ``update_plan`` call shown as a checklist
  ``error {message}``               a warning :class:`~turnfold.model.SystemNotice`
  ================================  ========================================================

  A call's status (:func:`call_status`): ``failed`` or a non-zero ``exit_code`` is ``error``,
  ``declined`` is ``error`` (the command was rejected), ``completed`` is ``success``; a call
  still ``in_progress`` when the stream ends has no recorded outcome (``unknown``, spec L-3);
- ``turn.completed {usage}`` → ``metadata["session_usage"]``, in :mod:`turnfold.usage`'s names:
  the usage is the thread's since it started (Codex's ``total_token_usage``), a resumed
  thread's earlier runs included and its spawned agents' own threads not, so it is not this
  run's, and the stream records no response's usage: the transcript's tokens are not known;
- ``turn.failed {error}`` and ``error {message}`` → :class:`~turnfold.model.AssistantError` and
  ``outcome`` ``error`` (H-6); a ``turn.failed`` that repeats the turn's last ``error`` (Codex
  fails the turn with its last critical error) only ends the turn: the error is shown once;
- ``request_user_input`` → a :class:`~turnfold.model.PendingAction` question;
- ``turn.started`` → a prompt marked not recorded
  (:func:`~turnfold.formats.common.prompt_not_recorded`): the turn's prompt is not in the
  stream, but each turn (a resumed thread's stream appended to the same file has two) keeps
  its own boundary (P-1). A stream that ends after a ``turn.started`` without its
  ``turn.completed`` or ``turn.failed`` (the process killed, its output cut off) is read by the
  rule every agent's headless stream shares (:func:`~turnfold.formats.common.stream_cut_off`):
  a warning, the run ``incomplete``, its turn stopped;
- ``item.plan.delta`` is left out (the plan item holds the whole text).

Codex CLI before 0.44 printed another stream under ``--json``
(``event_processor_with_json_output.rs``, removed in openai/codex#4525): a line of the run's
settings (``{"model", "sandbox", "workdir", …}``: record type ``config``, metadata ``model``
and ``cwd``), a line ``{"prompt"}`` (the prompt), then every protocol event but the streamed
deltas as ``{"id", "msg": {"type", …}}`` (record types ``msg/<type>``): ``agent_message`` and
``user_message`` are texts, ``agent_reasoning`` (``…_raw_content``) thinking;
``exec_command_begin``/``…_end`` an ``exec_command`` call settled by its ``exit_code``,
``patch_apply_begin``/``…_end`` an ``apply_patch`` call by its ``success``,
``mcp_tool_call_begin``/``…_end`` an MCP call by its ``result`` (``Ok``/``Err``),
``web_search_begin``/``…_end`` a ``web_search`` call, ``plan_update`` an ``update_plan`` call;
``token_count`` is one response's usage (the event's own counts, or
``info.last_token_usage``), put on the entries since the previous one and added up in
``metadata["usage"]`` (``info.total_token_usage`` as ``session_usage``); ``error`` an error
and ``outcome`` ``error``, ``stream_error`` a warning notice, ``background_event`` a notice,
``turn_aborted`` an :class:`~turnfold.model.AbortMarker`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any, TypeVar

from turnfold.formats import mcp
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    describe_args,
    prompt_not_recorded,
    stream_cut_off,
    stringify,
    text_result,
    usage_from,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.openai_responses import plan_result
from turnfold.formats.protocol import read_events
from turnfold.formats.source import Source, warning_count
from turnfold.formats.wording import failure
from turnfold.formats.wording import result as worded_result
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    Entry,
    PendingAction,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import add_into, attach_usage, counts_of

_E = TypeVar("_E", bound=Entry)

NAME = "codex-exec-json"

_CALL_ITEMS = NameSet(
    {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search",
     "todo_list"}
)  # fmt: skip
RECORDS = Records(
    mapped={
        "thread.started": "metadata: the thread id (session_id)",
        "item/agent_message": "assistant text",
        "item/reasoning": "reasoning (a summary)",
        "item/plan": "assistant text marked as a plan",
        "item/command_execution": "an exec_command call: command, output, exit code",
        "item/file_change": "an apply_patch call naming the changed files",
        "item/mcp_tool_call": "an MCP tool call, its result or error",
        "item/collab_tool_call": "a multi-agent call (spawn_agent, wait…); spawned agents as "
        "sub-agents whose steps the stream does not hold",
        "item/web_search": "a web_search call",
        "item/todo_list": "an update_plan call shown as a checklist",
        "item/error": "a warning notice",
        "turn.started": "a turn began: a prompt marked not recorded (the stream has none)",
        "turn.completed": "the thread's token usage so far (session_usage)",
        "turn.failed": "an error; outcome error",
        "error": "an error; outcome error",
        "request_user_input": "a question waiting on the user",
        "config": "Codex < 0.44: the run's settings: model, working folder (metadata)",
        "prompt": "Codex < 0.44: the prompt",
        "msg/session_configured": "Codex < 0.44: metadata: session id, model",
        "msg/agent_message": "Codex < 0.44: assistant text",
        "msg/user_message": "Codex < 0.44: a prompt",
        "msg/agent_reasoning": "Codex < 0.44: reasoning (a summary)",
        "msg/agent_reasoning_raw_content": "Codex < 0.44: reasoning",
        "msg/exec_command_begin": "Codex < 0.44: an exec_command call",
        "msg/exec_command_end": "Codex < 0.44: settles its call: output, exit code, duration",
        "msg/patch_apply_begin": "Codex < 0.44: an apply_patch call naming the changed files",
        "msg/patch_apply_end": "Codex < 0.44: settles its call: success, output",
        "msg/mcp_tool_call_begin": "Codex < 0.44: an MCP tool call",
        "msg/mcp_tool_call_end": "Codex < 0.44: settles its call: result or error",
        "msg/web_search_begin": "Codex < 0.44: a web_search call",
        "msg/web_search_end": "Codex < 0.44: settles its call with its query",
        "msg/plan_update": "Codex < 0.44: an update_plan call shown as a checklist",
        "msg/token_count": "Codex < 0.44: a response's usage on its entries, summed (metadata); "
        "the thread's total (session_usage)",
        "msg/error": "Codex < 0.44: an error; outcome error",
        "msg/stream_error": "Codex < 0.44: a warning notice (the stream was retried)",
        "msg/background_event": "Codex < 0.44: a notice",
        "msg/turn_aborted": "Codex < 0.44: an abort marker",
    },
    ignored={
        "item.plan.delta": "streamed plan text; the plan item holds all of it",
        "msg/task_started": "Codex < 0.44: a turn began",
        "msg/task_complete": "Codex < 0.44: the turn ended; its last message is an "
        "agent_message before it",
        "msg/exec_command_output_delta": "Codex < 0.44: output as it came; the end event holds "
        "all of it",
        "msg/turn_diff": "Codex < 0.44: the turn's diff; its patch calls name the changes",
        "msg/agent_reasoning_section_break": "Codex < 0.44: a break between reasoning sections",
        "msg/shutdown_complete": "Codex < 0.44: the process ended",
    },
)
#: A legacy settings line has these keys (``create_config_summary_entries``), all strings.
_CONFIG_KEYS = NameSet({"workdir", "model", "provider", "approval", "sandbox"})

_ITEM_EVENTS = NameSet({"item.started", "item.updated", "item.completed"})
_EVENTS = NameSet(set(RECORDS.mapped) | set(RECORDS.ignored) | set(_ITEM_EVENTS))


def call_status(item: Mapping[str, Any], completed: bool = False) -> ToolStatus:
    """The one status rule of this format: what an item's ``status`` and ``exit_code`` say;
    an item with no status of its own (``web_search``, ``todo_list``) succeeded when its
    ``item.completed`` event arrived.

    >>> call_status({"status": "completed", "exit_code": 0}), call_status({"status": "failed"})
    ('success', 'error')
    >>> call_status({"status": "completed", "exit_code": 2}), call_status({"status": "declined"})
    ('error', 'error')
    >>> call_status({"status": "in_progress"}), call_status({"query": "q"}, completed=True)
    ('unknown', 'success')
    """
    code = item.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return "error"
    status = item.get("status")
    if status in ("failed", "declined") or item.get("error"):
        return "error"
    if status == "completed" or (status is None and completed):
        return "success"
    return "unknown"


# --- detection ------------------------------------------------------------------------------


def _classify(value: Any) -> int:
    if isinstance(value, Mapping) and "type" not in value:
        return _classify_legacy(value)
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        return NOT_MINE
    kind = value["type"]
    if kind == "thread.started" and "thread_id" in value:
        return DISTINCTIVE
    if kind in _ITEM_EVENTS:
        item = value.get("item")
        return DISTINCTIVE if isinstance(item, Mapping) and "id" in item else NOT_MINE
    if kind in ("turn.completed", "turn.failed", "turn.started", "item.plan.delta"):
        return DISTINCTIVE if kind != "turn.started" else READABLE
    if kind == "error" and isinstance(value.get("message"), str) and len(value) == 2:
        return READABLE
    return NOT_MINE


def _classify_legacy(value: Mapping[str, Any]) -> int:
    """Codex < 0.44: ``{"id", "msg": {"type"}}`` events; the settings and prompt lines before
    them read as this format's but carry no mark of it."""
    msg = value.get("msg")
    if isinstance(msg, Mapping):
        return DISTINCTIVE if isinstance(msg.get("type"), str) and "id" in value else NOT_MINE
    if _is_config(value) or (len(value) == 1 and isinstance(value.get("prompt"), str)):
        return READABLE
    return NOT_MINE


def _is_config(value: Mapping[str, Any]) -> bool:
    return len(_CONFIG_KEYS & value.keys()) >= 3 and all(isinstance(v, str) for v in value.values())


def detect(source: Source) -> Evidence:
    """``thread.started``, ``turn.*`` and ``item.*`` events, one per line (or the legacy
    ``msg`` events)."""
    return Evidence.of_events(source, _classify, "no thread/turn/item events")


# --- reading --------------------------------------------------------------------------------


class _Reader:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.transcript = Transcript(metadata={"source_format": NAME, "agent": "codex"})
        self.items: dict[str, Entry] = {}
        self.warned: set[str] = set()  # the reasons warned of once (_warn_once)
        self.response: list[Entry] = []  # legacy: the entries since the last token_count
        self.totals: dict[str, int] = {}  # legacy: the responses' usage summed
        # The message of the turn's last ``error`` event: Codex ends that turn with a
        # ``turn.failed`` repeating it (its last critical error), one error, not two.
        self.turn_error: str | None = None
        #: The line of the ``turn.started`` whose turn has not ended (no ``turn.completed`` or
        #: ``turn.failed`` yet): a stream that ends with one set was cut off mid-turn.
        self.open_turn: int | None = None

    def event(self, record: Mapping[str, Any], line: int) -> None:
        if "type" not in record:
            self.legacy(record, line)
            return
        kind = record.get("type")
        if not isinstance(kind, str):
            self.source.warn(f"an event whose type is {type(kind).__name__} skipped", line)
            return
        if kind in _ITEM_EVENTS:
            item = record.get("item")
            if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
                self.source.warn(f"{kind} without an item", line)
                return
            item_type = f"item/{item['type']}"
            if item_type not in RECORDS.mapped:
                self.source.warn(f"unknown item type {item['type']!r} skipped", line)
                return
            done = kind == "item.completed"
            warnings = warning_count(self.source.warnings)
            if item["type"] == "mcp_tool_call":
                result = item.get("result")
                mcp.warn_unknown(
                    result.get("content") if isinstance(result, Mapping) else None,
                    lambda reason: self._warn_once(reason, line, item_type),
                )
            self.item(item, str(item.get("id") or f"line-{line}"), done)
            # Counted, not measured: past the listed ones a warning adds nothing to the list.
            if warning_count(self.source.warnings) == warnings:  # else accounted as warned about
                self.source.mapped(item_type)
            return
        if kind in RECORDS.ignored:
            self.source.ignored(str(kind))
        elif kind == "turn.started":
            self.turn_error, self.open_turn = None, line
            entries = self.transcript.entries
            if not (entries and isinstance(entries[-1], UserMessage)):
                self.transcript.append(prompt_not_recorded())
            self.source.mapped(kind)
        elif kind == "thread.started":
            # Each process numbers its items from item_0: a resumed run's stream appended to
            # the first one's names new items by the ids of the first one's.
            self.items = {}
            if isinstance(record.get("thread_id"), str):
                self.transcript.metadata["session_id"] = record["thread_id"]
            self.source.mapped("thread.started")
        elif kind == "turn.completed":
            self.open_turn = None
            usage = _token_usage(record.get("usage"))
            if usage is not None:  # the latest is the thread's total so far
                self.transcript.metadata["session_usage"] = counts_of(usage)
            self.source.mapped("turn.completed")
        elif kind in ("turn.failed", "error"):
            error = record.get("error") if kind == "turn.failed" else record
            message = error.get("message") if isinstance(error, Mapping) else None
            text = message if isinstance(message, str) and message else f"{kind}"
            if kind == "error" or text != self.turn_error:
                self.transcript.append(AssistantError(message=text))
            self.turn_error = text if kind == "error" else None
            if kind == "turn.failed":
                self.open_turn = None
            self.transcript.metadata["outcome"] = "error"
            self.source.mapped(str(kind))
        elif kind == "request_user_input":
            questions = record.get("questions")
            texts = [
                q.get("question") or q.get("header")
                for q in questions if isinstance(q, Mapping)
            ] if isinstance(questions, list) else []  # fmt: skip
            call_id = record.get("call_id")
            self.transcript.append(
                PendingAction(
                    action="question",
                    text="\n".join(t for t in texts if isinstance(t, str)),
                    call_id=call_id if isinstance(call_id, str) else None,
                )
            )
            self.source.mapped("request_user_input")
        else:
            self.source.warn(f"unknown event type {kind!r} skipped", line)

    # --- Codex < 0.44 -------------------------------------------------------------------------

    def legacy(self, record: Mapping[str, Any], line: int) -> None:
        """One line of the legacy stream: settings, prompt or ``{"id", "msg"}`` event."""
        msg = record.get("msg")
        meta = self.transcript.metadata
        if not isinstance(msg, Mapping):
            if _is_config(record):
                for key, name in (("model", "model"), ("workdir", "cwd")):
                    if record.get(key):
                        meta[name] = record[key]
                self.source.mapped("config")
            elif isinstance(record.get("prompt"), str):
                self._add(UserMessage(text=record["prompt"]))
                self.source.mapped("prompt")
            else:
                self.source.warn("not a codex exec event", line)
            return
        kind = f"msg/{msg.get('type')}"
        if kind in RECORDS.ignored:
            self.source.ignored(kind)
            return
        if kind not in RECORDS.mapped:
            self.source.warn(f"unknown event type {kind!r} skipped", line, record_type=kind)
            return
        warnings = warning_count(self.source.warnings)
        self._legacy_event(kind, msg, line)
        if warning_count(self.source.warnings) == warnings:  # else accounted as warned about
            self.source.mapped(kind)

    def _legacy_event(self, kind: str, msg: Mapping[str, Any], line: int) -> None:
        meta = self.transcript.metadata
        text = msg.get("message")
        text = text if isinstance(text, str) else ""
        if kind == "msg/session_configured":
            for key, name in (("session_id", "session_id"), ("model", "model")):
                if isinstance(msg.get(key), str) and msg[key]:
                    meta[name] = msg[key]
        elif kind == "msg/agent_message" and text:
            self._add(AssistantText(text=text))
        elif kind == "msg/user_message" and text:
            self._add(UserMessage(text=text))
        elif kind in ("msg/agent_reasoning", "msg/agent_reasoning_raw_content"):
            thought = msg.get("text")
            if isinstance(thought, str) and thought:
                summary = kind == "msg/agent_reasoning"
                self._add(Thinking(text=thought, form="summary" if summary else "text"))
        elif kind.endswith("_begin"):
            self._begin(kind, msg)
        elif kind.endswith("_end"):
            self._end(kind, msg, line)
        elif kind == "msg/plan_update":
            args = {"explanation": msg.get("explanation"), "plan": _listed(msg.get("plan"))}
            call_id = f"plan-{len(self.items)}"
            result = plan_result(args, None)
            call = self._made(call_id, "update_plan", args, "success", result, None, None)
            self.items[call_id] = self._add(call)
        elif kind == "msg/token_count":
            self._token_count(msg)
        elif kind == "msg/error":
            self.transcript.append(
                AssistantError(message=text) if text else failure("reader.error")
            )
            meta["outcome"] = "error"
        elif kind == "msg/stream_error":
            self.transcript.append(SystemNotice(text=text, level="warning", subtype="error"))
        elif kind == "msg/background_event":
            self.transcript.append(SystemNotice(text=text, subtype="background_event"))
        elif kind == "msg/turn_aborted":
            reason = msg.get("reason")
            self.transcript.append(AbortMarker(reason=reason if isinstance(reason, str) else None))

    def _add(self, entry: _E) -> _E:
        self.response.append(self.transcript.append(entry))
        return entry

    def _begin(self, kind: str, msg: Mapping[str, Any]) -> None:
        call_id = msg.get("call_id")
        call_id = call_id if isinstance(call_id, str) and call_id else f"call-{len(self.items)}"
        description: str | None
        args: Any
        if kind == "msg/exec_command_begin":
            name, args = "exec_command", {"command": msg.get("command"), "cwd": msg.get("cwd")}
            description = describe_args(name, args, self.transcript.metadata.get("cwd"))
        elif kind == "msg/patch_apply_begin":
            changes = msg.get("changes")
            changes = changes if isinstance(changes, Mapping) else {}
            listed = [{"path": path, "kind": _change_kind(c)} for path, c in changes.items()]
            name, args = "apply_patch", {"changes": listed}
            description = describe_args(
                name, {"path": list(changes)}, self.transcript.metadata.get("cwd")
            )
        elif kind == "msg/mcp_tool_call_begin":
            invocation = msg.get("invocation")
            invocation = invocation if isinstance(invocation, Mapping) else {}
            name = f"mcp__{invocation.get('server')}__{invocation.get('tool')}"
            args = invocation.get("arguments")
            description = describe_args(name, args)
        else:  # web_search_begin: its query comes with its end
            name, args, description = "web_search", {}, None
        call = self._made(call_id, name, args, "unknown", None, None, description)
        self.items[call_id] = self._add(call)

    def _end(self, kind: str, msg: Mapping[str, Any], line: int) -> None:
        call = self.items.get(str(msg.get("call_id")))
        if not isinstance(call, ToolCall):
            reason = f"{kind} for an unknown call_id {msg.get('call_id')!r} skipped"
            self.source.warn(reason, line, record_type=kind)
            return
        changes: dict[str, Any] = {}
        if kind == "msg/exec_command_end":
            code = msg.get("exit_code")
            changes["status"] = "success" if code == 0 else "error"
            output = msg.get("aggregated_output") or "".join(
                str(msg.get(k) or "") for k in ("stdout", "stderr")
            )
            changes["result"] = text_result(output) if isinstance(output, str) else None
            duration = msg.get("duration")
            if isinstance(duration, Mapping) and isinstance(duration.get("secs"), int):
                nanos = duration.get("nanos")
                changes["duration_ms"] = duration["secs"] * 1000 + (
                    nanos / 1e6 if isinstance(nanos, int) else 0
                )
        elif kind == "msg/patch_apply_end":
            changes["status"] = "success" if msg.get("success") is True else "error"
            output = "".join(str(msg.get(k) or "") for k in ("stdout", "stderr"))
            changes["result"] = text_result(output) if output else None
        elif kind == "msg/mcp_tool_call_end":
            outcome = msg.get("result")
            outcome = outcome if isinstance(outcome, Mapping) else {}
            ok, err = outcome.get("Ok"), outcome.get("Err")
            failed = not isinstance(ok, Mapping) or ok.get("isError") is True
            changes["status"] = "error" if failed else "success"
            changes["result"] = mcp.call_result(
                ok if isinstance(ok, Mapping) else {}, err if isinstance(err, str) else None
            )
        else:  # web_search_end
            changes["args"] = {"query": msg.get("query")}
            changes["description"] = describe_args("web_search", changes["args"])
            changes["status"] = "success"
        self.transcript.update(call, **changes)

    def _token_count(self, msg: Mapping[str, Any]) -> None:
        """One response's usage (the event's own counts until September 2025, then
        ``info.last_token_usage``) on its entries; ``info.total_token_usage`` is the
        thread's."""
        info = msg.get("info")
        last = info.get("last_token_usage") if isinstance(info, Mapping) else msg
        usage = _token_usage(last)
        if usage is not None:
            attach_usage(self.response, usage, self.transcript)
            add_into(self.totals, counts_of(usage))
            self.transcript.metadata["usage"] = dict(self.totals)
        total = _token_usage(info.get("total_token_usage")) if isinstance(info, Mapping) else None
        if total is not None:
            self.transcript.metadata["session_usage"] = counts_of(total)
        self.response = []

    def _warn_once(self, reason: str, line: int, record: str) -> None:
        """Warn of ``reason`` on its first record only (the record is accounted as warned)."""
        if reason not in self.warned:
            self.warned.add(reason)
            self.source.warn(reason, line, record_type=record)

    def item(self, item: Mapping[str, Any], item_id: str, completed: bool) -> None:
        kind = item["type"]
        known = self.items.get(item_id)
        if kind in _CALL_ITEMS:
            call = self._call(item, item_id, completed)
            if isinstance(known, ToolCall):
                self.transcript.update(
                    known,
                    **{
                        k: getattr(call, k)
                        for k in ("args", "description", "status", "result", "subagent")
                    },
                )
            else:
                self.items[item_id] = self.transcript.append(call)
            return
        text = item.get("text") if isinstance(item.get("text"), str) else ""
        if kind in ("agent_message", "plan"):
            if isinstance(known, AssistantText):
                self.transcript.update(known, text=text)
            elif text:
                meta = {"plan": True} if kind == "plan" else {}
                entry = self.transcript.append(AssistantText(text=text, meta=meta))
                self.items[item_id] = entry
        elif kind == "reasoning":
            if isinstance(known, Thinking):
                self.transcript.update(known, text=text)
            elif text:
                self.items[item_id] = self.transcript.append(Thinking(text=text, form="summary"))
        elif kind == "error" and known is None:
            message = item.get("message")
            notice = SystemNotice(text=stringify(message), level="warning", subtype="error")
            self.items[item_id] = self.transcript.append(notice)

    def _call(self, item: Mapping[str, Any], item_id: str, completed: bool) -> ToolCall:
        kind = item["type"]
        status = call_status(item, completed)
        args: Any
        result: ToolResult | None = None
        subagent: SubAgent | None = None
        if kind == "command_execution":
            name, args = "exec_command", {"command": item.get("command")}
            output = item.get("aggregated_output")
            if item.get("status") == "declined" and not output:
                result = worded_result("reader.command_declined")
            elif isinstance(output, str) and (output or status != "unknown"):
                result = text_result(output)
            described = describe_args(name, {"command": _argv(item.get("command"))})
            return self._made(item_id, name, args, status, result, None, described)
        elif kind == "file_change":
            changes: list[Any] = _listed(item.get("changes"))
            name, args = "apply_patch", {"changes": changes}
            lines = [f"{c.get('kind')}: {c.get('path')}" for c in changes if isinstance(c, Mapping)]
            result = text_result("\n".join(lines)) if lines and status != "unknown" else None
            paths = [c.get("path") for c in changes if isinstance(c, Mapping)]
            description = describe_args(name, {"path": [p for p in paths if isinstance(p, str)]})
            return self._made(item_id, name, args, status, result, None, description)
        elif kind == "mcp_tool_call":
            name = f"mcp__{item.get('server')}__{item.get('tool')}"
            args = item.get("arguments")
            result = _mcp_result(item)
        elif kind == "collab_tool_call":
            name = str(item.get("tool") or "collab_tool_call")
            args = {"prompt": item.get("prompt"), "receivers": item.get("receiver_thread_ids")}
            result, subagent = _collab(item, name, status)
        elif kind == "web_search":
            name, args = "web_search", {"query": item.get("query")}
        else:  # todo_list
            items: list[Any] = _listed(item.get("items"))
            plan = [
                {"step": t.get("text"), "status": "completed" if t.get("completed") else "pending"}
                for t in items if isinstance(t, Mapping)
            ]  # fmt: skip
            name, args = "update_plan", {"plan": plan}
            result = plan_result(args, None)
        return self._made(item_id, name, args, status, result, subagent, describe_args(name, args))

    def _made(
        self,
        item_id: str,
        name: str,
        args: Any,
        status: ToolStatus,
        result: ToolResult | None,
        subagent: SubAgent | None,
        description: str | None,
    ) -> ToolCall:
        return ToolCall(
            call_id=item_id,
            name=name,
            args=args,
            description=description,
            status=status,
            result=result,
            subagent=subagent,
        )


def _change_kind(change: Any) -> str | None:
    """A ``FileChange``'s kind: ``{"add": {…}}`` names it, an older unit variant is it."""
    if isinstance(change, str):
        return change
    return next(iter(change), None) if isinstance(change, Mapping) else None


def _token_usage(raw: Any) -> Usage | None:
    """Codex's ``TokenUsage``: its input count holds the cached tokens."""
    return usage_from(
        raw,
        input_tokens="input_tokens",
        output_tokens="output_tokens",
        cache_read_tokens="cached_input_tokens",
        reasoning_tokens="reasoning_output_tokens",
    )


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mcp_result(item: Mapping[str, Any]) -> ToolResult | None:
    """The item's ``McpToolCallItemResult`` (its ``structured_content`` in snake case) as
    :func:`turnfold.formats.mcp.call_result` reads any, after the error's message."""
    error = item.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    result = item.get("result")
    result = result if isinstance(result, Mapping) else {}
    server = {
        "content": result.get("content"),
        "structuredContent": result.get("structured_content"),
    }
    return mcp.call_result(server, message if isinstance(message, str) else None)


def _collab(
    item: Mapping[str, Any], name: str, status: ToolStatus
) -> tuple[ToolResult | None, SubAgent | None]:
    states = item.get("agents_states")
    states = states if isinstance(states, Mapping) else {}
    messages = [
        "\n".join(str(p) for p in (f"{agent}: {state.get('status')}", state.get("message")) if p)
        for agent, state in states.items()
        if isinstance(state, Mapping)
    ]
    result = text_result("\n\n".join(messages)) if messages and status != "unknown" else None
    subagent = None
    receivers = item.get("receiver_thread_ids")
    if name == "spawn_agent":
        agent_id = receivers[0] if isinstance(receivers, list) and receivers else None
        prompt = item.get("prompt")
        subagent = SubAgent(
            task=prompt if isinstance(prompt, str) else None,
            agent_id=agent_id if isinstance(agent_id, str) else None,
            steps_missing=True,
        )
    return result, subagent


def read(source: Source) -> Transcript:
    """Every event in order; an item's later events update the entry its first one made."""
    reader = _Reader(source)
    read_events(source, reader.event, "an exec event")
    if reader.open_turn is not None:
        stream_cut_off(source, reader.transcript, reader.open_turn, "turn.completed or turn.failed")
    for entry in reader.transcript.tool_calls():
        if entry.status in ("pending", "executing"):
            reader.transcript.update(entry, status="unknown")
    return reader.transcript


def _argv(command: Any) -> Any:
    """A ``command_execution``'s command as the shell wrapper's argv where it is one: Codex
    prints the argv it ran as one shell-quoted string (``/bin/bash -lc 'cat notes.txt'``), and
    the shared description rule drops a wrapper (``cat notes.txt``) only from an argv."""
    if not isinstance(command, str):
        return command
    try:
        argv = shlex.split(command)
    except ValueError:  # unbalanced quotes: the string as it is
        return command
    return argv if len(argv) == 3 and argv[1] in ("-c", "-lc") else command
