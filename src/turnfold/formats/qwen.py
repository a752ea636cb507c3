"""Qwen Code chat records (spec L-2.4): ``~/.qwen/projects/<cwd>/chats/<sessionId>.jsonl``.

One ``ChatRecord`` per line (notes §3.2): ``{uuid, parentUuid, sessionId, timestamp, type, subtype?,
cwd, version, gitBranch?, message?: {role, parts}, usageMetadata?, model?, toolCallResult?,
systemPayload?, agentId?, agentName?, isSidechain?}``. Model content is Gemini ``parts`` (see
``gemini_parts``).

**The tree.** Records form a tree through ``parentUuid``; a rewind re-roots it and leaves dead
branches. The transcript is the *active branch*: from the last record that shows something, walk
back through the parents. The last record per ``uuid`` wins (a streamed thought is re-written by
the final record). A ``parentUuid`` that points nowhere makes its record a root, with a warning;
when earlier records exist the walk goes on from the record just before it in the file, since a
missing parent means a lost line, and stopping there would hide entries that can be read (L-4).
Two records glued onto one line (``…}{…``) arrive split by ``Source``, with one line number.
A record with no ``parentUuid`` key at all (not even null) follows the record before it in the
file, so records written without links keep their order (issue 11.4). So does a record whose
``uuid`` is no id: missing or empty, its own ``parentUuid``, or one a record of another type
already has (a file whose ids were trimmed to a placeholder such as ``"[trimmed]"``, which would
otherwise fold every record into the last one); one warning names the file and the first such
line.

**Records** (``type`` / ``subtype``):

- ``user`` → ``UserMessage``: ``systemPayload.displayText`` (what the user typed) or the text parts
  without injected ``<qwen:…>`` context; subtypes ``notification``, ``cron`` and
  ``background_task_completed`` are the runtime speaking → ``SystemNotice``.
- ``assistant`` → ``thought: true`` parts → ``Thinking(form="text")`` (Qwen Code stores the model's
  reasoning text there), text → ``AssistantText`` (``model``; ``usageMetadata`` → ``Usage``),
  ``functionCall`` → ``ToolCall`` (``call_id`` = ``functionCall.id``, ``batch_id`` = record uuid).
  ``usageMetadata`` has Gemini's names, but from an OpenAI-compatible API its candidates count
  is the completion's, reasoning included: a ``totalTokenCount`` of prompt plus candidates says
  so, and the thoughts are not added to the output again
  (:func:`~turnfold.formats.gemini_parts.usage_from`). A record with the usage and nothing else
  (Qwen Code 0.24's sub-agent writes a response's usage so, its calls on the next record) gives
  the usage to that next record, its child; one whose child never comes is warned of.
- ``tool_result`` → the result of the call with that id: ``functionResponse`` output (else
  ``toolCallResult.resultDisplay``), status from ``toolCallResult.status`` (success / error /
  cancelled), ``error`` when the response carries one or its text states a failure (Qwen Code
  records a failed shell command as ``success``, ``Exit Code: 2`` only in the output;
  ``gemini_parts.stated_outcome``), ``success`` for ``Exit Code: 0``, otherwise ``unknown`` (L-3).
- ``system/chat_compression`` → ``CompactionBoundary`` (``pre_tokens``; summary from the payload or
  the compressed history's first user turn); ``system/slash_command`` → ``UserMessage(command=…)``
  for the invocation and ``SystemNotice`` for its output; ``system/notification`` (and ``cron``,
  ``background_task_completed``) → ``SystemNotice``; ``system/turn_result`` → ``AbortMarker``
  when cancelled, ``AssistantError`` when failed (a turn that ends on a cancelled call without
  one, as ``-p`` mode leaves it, gets an ``AbortMarker`` too); ``system/custom_title`` →
  ``metadata["title"]``;
  ``system/ui_telemetry`` of a ``qwen-code.api_error`` event (a model request that failed: in
  ``-p`` mode its only record). Qwen Code retries some failed requests (``retryWithBackoff``
  around the logging content generator, which writes one ``api_error`` per failed attempt), so
  what the error was is told by what follows it: one a model response follows before the next
  prompt was retried → a warning ``SystemNotice``; the last one nothing answers before the next
  prompt or the end ended the turn → ``AssistantError`` (an error notice instead when a
  ``turn_result`` already records the turn's failure, so the failure counts once).
  Every other ``system`` subtype is bookkeeping for Qwen Code's own resume (``ui_telemetry``,
  ``attribution_snapshot``, ``file_history_snapshot``, ``session_*``, ``agent_*``, ``goal_*``,
  ``branch_checkpoint``, ``rewind``, ``at_command``, ...) and is ignored (listed in ``RECORDS``).
  Unknown record types and ``system`` subtypes are skipped with a warning.

**Sub-agents.** Sidechain records (``isSidechain: true``) are grouped by ``agentId`` (else
``agentName``) and become the child transcript of the ``task``/``agent`` call that spawned them:
the earliest not yet linked agent call before the group's first record, preferring one whose
``subagent_type`` is the group's ``agentName``. ``SubAgent`` stats come from the call's
``task_execution`` display (``executionSummary``) or, failing that, from the child transcript.
Background sub-agents (Qwen Code 0.15+) write their sidechain to
``<project>/subagents/<sessionId>/agent-<agentId>.jsonl``; given a path, those files are read
too, each linked to the call its ``.meta.json`` names (``toolUseId``), their records accounted for
under the session's. A group no call can be linked to is kept under an added call named
``agent`` (``call_id`` empty, ``meta["synthetic"]``) at the end, with a warning, so its entries
are not lost.

Metadata: ``session_id``, ``cwd``, ``version``, ``git_branch``, ``model`` (last used), ``title``.
A source with no Qwen record at all (e.g. a Claude Code file read with ``format="qwen"``, whose
records have ``message.content`` instead of ``message.parts``) raises ``TranscriptFormatError``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from turnfold.formats.catalog import Records
from turnfold.formats.common import NameSet, checked_timestamp, stringify, warned_timestamp
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.gemini_injected import CONTEXT_BLOCK
from turnfold.formats.gemini_parts import (
    FINAL_STATUSES,
    Assembler,
    PendingResult,
    as_parts,
    attach_child,
    build_result,
    corrected_status,
    count_of,
    images_of,
    is_agent_call,
    joined_text,
    model_entries,
    response_text,
    usage_from,
)
from turnfold.formats.plain_names import is_plain_name
from turnfold.formats.protocol import not_read
from turnfold.formats.source import (
    Source,
    join_warnings,
    json_object_file,
    open_source,
    sibling_files,
)
from turnfold.formats.wording import notice, stop
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
)
from turnfold.usage import attach_usage

NAME = "qwen"
#: What Qwen Code keeps its secrets in, in ``~/.qwen`` (``@qwen-code/qwen-code``'s bundle): the
#: Qwen OAuth login (``oauth_creds.json``) and the MCP servers' tokens (``mcp-oauth-tokens.json``,
#: and the encrypted store's ``mcp-oauth-tokens-v2.json`` and ``extension-secrets-v1.json``,
#: ``FileTokenStorage``, ``packages/core/src/mcp/token-storage/file-token-storage.ts``); of it
#: and of a project's ``.qwen``, ``settings.json``, whose ``security.auth.apiKey``, ``env`` and
#: ``mcpServers`` (each server's ``env`` and ``headers``, as ``qwen mcp add`` wrote them) hold
#: keys (``packages/cli/src/config/settingsSchema.ts``), and ``.env`` (``findEnvFiles``,
#: ``packages/cli/src/config/environment.ts``; 0.24.4). ``$QWEN_HOME`` names the folder under
#: any name, a relative value taken from the working folder (``Storage.getGlobalQwenDir``,
#: ``packages/core/src/config/storage.ts``). Its ``ide/<port>.lock`` files hold the IDE
#: companion's ``authToken`` (``Storage.getGlobalIdeDir``; ``IdeClient``'s
#: ``getConnectionConfigFromFile``). ``$QWEN_RUNTIME_DIR`` and the ``runtimeOutputDir``
#: setting move only ``tmp/``, ``debug/`` and ``projects/`` (``getRuntimeBaseDir``): no
#: secret goes there.
CREDENTIALS = Credentials(
    folders=frozenset({".qwen"}),
    files=frozenset({
        "oauth_creds.json", "mcp-oauth-tokens.json", "mcp-oauth-tokens-v2.json",
        "extension-secrets-v1.json", "settings.json", ".env", "ide/*.lock",
    }),
    variables=frozenset({"QWEN_HOME"}),
)  # fmt: skip

#: Subtypes in which the runtime, not the user, speaks.
_NOTICE_SUBTYPES = NameSet({"notification", "cron", "background_task_completed"})
_NOTICE = "system notice (the runtime speaking, not the user)"
#: ``system`` subtypes that only Qwen Code's own resume, UI or telemetry reads.
_BOOKKEEPING = {
    "ui_telemetry": "telemetry of API calls and tool runs; their outcomes are in the "
    "conversation records (but a qwen-code.api_error event's, read: see the module docstring)",
    "attribution_snapshot": "file attribution bookkeeping for commits",
    "file_history_snapshot": "file backups for undo",
    "at_command": "@-file metadata for the UI; the expanded prompt is in the user record",
    "rewind": "the rewind itself; the re-rooted tree decides what is shown",
    "branch_checkpoint": "resume bookkeeping",
    "session_model": "resume bookkeeping (the model is taken from the assistant records)",
    "session_source": "resume bookkeeping",
    "session_sources_snapshot": "resume bookkeeping",
    "session_artifact_event": "resume bookkeeping",
    "session_artifact_snapshot": "resume bookkeeping",
    "parent_session": "resume bookkeeping (the session it was forked from)",
    "agent_bootstrap": "sub-agent bootstrap bookkeeping",
    "agent_launch_prompt": "sub-agent launch bookkeeping; the prompt is the call's argument",
    "goal_state": "goal-mode bookkeeping",
    "goal_turn_end": "goal-mode bookkeeping",
    "omni_recall": "memory recall injected into the request, not part of the conversation",
    "user_text_elements": "UI text elements of a prompt; the prompt is in the user record",
}
#: What each record type (``type`` or ``type/subtype``) becomes; see the module docstring.
#: The ``ui_telemetry`` records of a failed model request (``qwen-code.api_error``): read.
_API_ERROR = "system/ui_telemetry/api_error"

RECORDS = Records(
    mapped={
        "user": "user message (typed text; injected context left out)",
        **{f"user/{s}": _NOTICE for s in sorted(_NOTICE_SUBTYPES)},
        "assistant": "thinking, assistant text and tool calls",
        "tool_result": "the result and status of the call with that id",
        "system/chat_compression": "compaction boundary",
        "system/slash_command": "the command as a user message, its output as a notice",
        **{f"system/{s}": _NOTICE for s in sorted(_NOTICE_SUBTYPES)},
        "system/turn_result": "abort marker (cancelled) or assistant error (failed)",
        "system/custom_title": "the session title",
        _API_ERROR: "a model request that failed (its message, its status code): an assistant "
        "error when no response follows before the next prompt, else a warning (retried)",
    },
    ignored={f"system/{s}": why for s, why in _BOOKKEEPING.items()},
)
_MAPPED_SYSTEM = NameSet(
    {"chat_compression", "slash_command", "turn_result", "custom_title", *_NOTICE_SUBTYPES}
)

#: Entries of a model response: one after a failed request shows the request was retried.
_RESPONSE = (AssistantText, Thinking, ToolCall)
#: Record types that belong to the conversation even when they show nothing.
_CONVERSATION = NameSet({"user", "assistant", "tool_result"})
#: Sub-agent files of a session: ``<project>/subagents/<sessionId>/agent-<agentId>.jsonl``.
_SUBAGENT_LINE_BASE = 1_000_000_000

#: Session facts taken from the first main-chain record that has them.
_FIRST_FACTS = (("sessionId", "session_id"), ("cwd", "cwd"), ("gitBranch", "git_branch"))

Order = tuple[int, int]  # (line, position on a glued line)


def _has_qwen_content(value: dict[str, Any]) -> bool:
    """Gemini-style ``message.parts``, or a tool result's or system record's payload."""
    message = value.get("message")
    return (isinstance(message, dict) and isinstance(message.get("parts"), list)) or isinstance(
        value.get("toolCallResult") or value.get("systemPayload"), dict
    )


def _is_qwen_record(value: Any) -> bool:
    return (
        isinstance(value, dict) and isinstance(value.get("uuid"), str) and _has_qwen_content(value)
    )


def _classify(value: Any) -> int:
    if _is_qwen_record(value):
        return DISTINCTIVE
    if not isinstance(value, dict) or "type" not in value:
        return NOT_MINE
    if isinstance(value.get("uuid"), str) or _has_qwen_content(value):
        return READABLE  # a system record of the chat tree, or a record whose uuid was trimmed
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """Records with ``uuid`` and ``message.parts`` (Claude Code's have ``message.content``)."""
    return Evidence.of(source.head_values(), _classify, "no record with uuid and message.parts")


def read(source: Source) -> Transcript:
    if not source.head:
        raise TranscriptFormatError(source.name, [NAME], None, "the source is empty")
    reader = _Reader(source)
    order: Order = (0, 0)
    for line, value in source.records():
        order = (line, order[1] + 1 if order[0] == line else 0)
        try:
            reader.feed(order, value)
        except Exception as exc:
            not_read(source, line, exc)
    if not reader.recognised:
        reason = "no Qwen Code chat record (message.parts, toolCallResult or systemPayload) found"
        raise TranscriptFormatError(source.name, [NAME], reader.first_unknown, reason)
    reader.warn_without_ids()
    _read_subagent_files(source, reader)
    return reader.transcript()


def _read_subagent_files(source: Source, reader: _Reader) -> None:
    """Sub-agents that run in the background (Qwen Code 0.15+) write their records to
    ``<project>/subagents/<sessionId>/agent-<agentId>.jsonl`` beside ``chats/``, with an
    ``.meta.json`` naming the call that spawned them (``toolUseId``). Their records join the
    session's as sidechains; their accounting joins the session's (issue 11)."""
    session_id = reader.metadata.get("session_id")
    if source.path is None or not isinstance(session_id, str) or not session_id:
        return
    if not is_plain_name(session_id):
        # Qwen Code's ids are UUIDs: a folder named by any other id could lie outside the
        # project's (``..``, an absolute path), where a hostile file would have it read.
        source.warn(
            f"sessionId {session_id!r} is not a plain name: the background sub-agents' files, "
            "in the folder it would name under subagents/, are not looked for"
        )
        return
    folder = source.path.parent.parent / "subagents" / session_id
    unlisted = source.warn_not_listed("background sub-agents' files (agent-*.jsonl)")
    for index, path in enumerate(sibling_files(folder, "agent-*.jsonl", unlisted), start=1):
        meta = json_object_file(path.with_name(path.stem + ".meta.json"))
        group = _text(meta.get("agentId")) or path.stem.removeprefix("agent-")
        if isinstance(meta.get("toolUseId"), str):
            reader.spawned_by[group] = meta["toolUseId"]
        try:
            child, stream = open_source(path)
        except OSError as exc:
            source.warn(f"sub-agent file {path.name}: {exc}")
            continue
        reader.source = child
        try:
            order: Order = (0, 0)
            for line, value in child.records():
                order = (line, order[1] + 1 if order[0] == line else 0)
                reader.feed((index * _SUBAGENT_LINE_BASE + line, order[1]), value, group=group)
        finally:
            reader.source = source
            if stream is not None:
                stream.close()
        join_warnings(source.warnings, child.warnings)
        source.accounting.merge(child.accounting)


@dataclass(slots=True)
class _Node:
    """One record, converted; what the tree walk needs and nothing of the raw record."""

    uuid: str
    parent: str | None
    order: Order
    items: list[Entry | PendingResult]
    #: The sidechain group (``agentId``), None on the main chain.
    group: str | None
    agent_name: str | None
    #: Whether the record may end the active branch (it shows something or is conversation).
    shown: bool
    timestamp: str | None
    #: Whether the record has a ``parentUuid`` key at all (null included); records without one
    #: follow the record before them in the file (issue 11.4).
    linked: bool = True
    #: The record's ``type``: a later record under the same uuid replaces it only if it has it.
    kind: Any = None
    #: A response's usage that the record holds with no entry to carry it: its child's.
    usage: Usage | None = None


@dataclass
class _Reader:
    source: Source
    nodes: dict[str, _Node] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=lambda: {"source_format": NAME})
    recognised: bool = False
    first_unknown: int | None = None
    #: Sidechain group → the id of the call that spawned it (a sub-agent file's meta).
    spawned_by: dict[str, str] = field(default_factory=dict)
    _dangling: set[str] = field(default_factory=set)
    #: Lines of records whose ``uuid`` is no id, read in file order (one warning for them all).
    _without_ids: list[int] = field(default_factory=list)

    # --- reading ---------------------------------------------------------------------------------

    def feed(self, order: Order, value: Any, group: str | None = None) -> None:
        """Read one record; ``group`` puts it on that sidechain (a sub-agent's own file)."""
        line = order[0] % _SUBAGENT_LINE_BASE
        if isinstance(value, MalformedLine):
            self.source.warn(value.reason, line)
            return
        if not isinstance(value, dict):
            self.first_unknown = self.first_unknown or line
            self.source.warn("not a JSON object; skipped", line)
            return
        if not self._has_id(value):
            # Kept in file order under a key of its own (the user's record is not modified).
            self._without_ids.append(line)
            value = {k: v for k, v in value.items() if k != "parentUuid"}
            value["uuid"] = f"line {line}.{order[1]}" + ("" if group is None else f" {group}")
        self.recognised = self.recognised or _is_qwen_record(value)
        group = _group(value) or group
        if group is None:
            self._remember(value)
        stamp = warned_timestamp(value.get("timestamp"), checked_timestamp,
                                 lambda reason: self.source.warn(reason, line),
                                 f"record {str(value['uuid'])[:80]}", name="timestamp")  # fmt: skip
        items = self._convert(value, line, stamp)
        parent = value.get("parentUuid")
        name = value.get("agentName")
        # A later record with the same uuid replaces the earlier one, position included.
        self.nodes[value["uuid"]] = _Node(
            uuid=value["uuid"],
            parent=parent if isinstance(parent, str) else None,
            order=order,
            items=items,
            group=group,
            agent_name=name if isinstance(name, str) else None,
            shown=bool(items) or _text(value.get("type")) in _CONVERSATION,
            timestamp=stamp,
            linked="parentUuid" in value,
            kind=value.get("type"),
            usage=usage_from(value.get("usageMetadata"))
            if value.get("type") == "assistant" and not items
            else None,
        )

    def _has_id(self, value: dict[str, Any]) -> bool:
        """Whether the record's ``uuid`` identifies it: a non-empty string that is not its own
        parent and not the uuid of a record of another type (a placeholder left by trimming;
        a record re-written under its uuid, such as a streamed thought, keeps its type)."""
        uuid = value.get("uuid")
        if not isinstance(uuid, str) or not uuid or uuid == value.get("parentUuid"):
            return False
        earlier = self.nodes.get(uuid)
        return earlier is None or earlier.kind == value.get("type")

    def warn_without_ids(self) -> None:
        if self._without_ids:
            count, first = len(self._without_ids), self._without_ids[0]
            reason = (
                f"{count} record(s) have no usable uuid (missing, empty, or a placeholder "
                "shared by other records); read in file order"
            )
            self.source.warn(reason, first)

    def _remember(self, record: dict[str, Any]) -> None:
        """Session facts for the metadata, from main-chain records (the first, or the last)."""
        metadata = self.metadata
        for key, name in _FIRST_FACTS:
            if name not in metadata and isinstance(record.get(key), str):
                metadata[name] = record[key]
        for key in ("version", "model"):
            value = record.get(key)
            if value and isinstance(value, str):
                metadata[key] = value

    def _convert(
        self, record: dict[str, Any], line: int, stamp: str | None
    ) -> list[Entry | PendingResult]:
        kind = record.get("type")
        message = record.get("message")
        parts = as_parts(message.get("parts")) if isinstance(message, dict) else []
        payload = record.get("systemPayload")
        payload = payload if isinstance(payload, dict) else {}
        subtype = _text(record.get("subtype"))
        source = self.source
        if kind == "user":
            source.mapped(f"user/{subtype}" if subtype in _NOTICE_SUBTYPES else "user")
            return _user_items(subtype, parts, payload, stamp, line)
        if kind == "assistant":
            source.mapped("assistant")
            return list(_assistant_entries(record, parts, stamp))
        if kind == "tool_result":
            source.mapped("tool_result")
            return list(_tool_results(record, parts, stamp, line))
        if kind == "system":
            record_type = f"system/{subtype}"
            if subtype in _MAPPED_SYSTEM:
                source.mapped(record_type)
                return list(self._system(subtype, payload, stamp))
            if subtype == "ui_telemetry" and _api_error(payload) is not None:
                # The one record of a failed model request in ``-p`` mode (no turn_result):
                # counted apart from the telemetry ignored.
                source.mapped(_API_ERROR)
                return [_api_error_notice(payload, stamp)]
            if subtype in _BOOKKEEPING:
                source.ignored(record_type)
            else:
                reason = f"unknown system record {subtype!r} skipped"
                source.warn(reason, line, record_type=record_type)
            return []
        source.warn(f"unknown record type {kind!r} skipped", line, record_type=str(kind))
        return []

    def _system(
        self, subtype: str | None, payload: dict[str, Any], stamp: str | None
    ) -> list[Entry]:
        if subtype == "chat_compression":
            return [_compaction(payload, stamp)]
        if subtype == "slash_command":
            return _slash_command(payload, stamp)
        if subtype in _NOTICE_SUBTYPES:
            text = payload.get("displayText")
            return [SystemNotice(text=text, subtype=subtype, timestamp=stamp)] if text else []
        if subtype == "turn_result":
            return _turn_result(payload, stamp)
        if subtype == "custom_title" and isinstance(payload.get("customTitle"), str):
            self.metadata["title"] = payload["customTitle"]
        return []

    # --- the tree --------------------------------------------------------------------------------

    def transcript(self) -> Transcript:
        ordered = sorted(self.nodes.values(), key=lambda n: n.order)
        main = [n for n in ordered if n.group is None and n.shown]
        path = self._walk(main[-1], None, main) if main else []
        entries, calls = self._assemble(path)
        entries = _mark_stopped_turns(entries)
        agents = _agent_calls(calls)
        groups: dict[str, list[_Node]] = {}
        for node in ordered:
            if node.group is not None and node.shown:
                groups.setdefault(node.group, []).append(node)
        linked: set[int] = set()
        # Groups in order of appearance: a sub-agent's own agent calls can then adopt the
        # sidechains that start after them (nested sub-agents).
        for key, members in groups.items():
            child_entries, child_calls = self._assemble(self._walk(members[-1], key, members))
            self._link(key, members, child_entries, agents, linked, entries)
            agents += _agent_calls(child_calls)
        return Transcript(entries, metadata=self.metadata)

    def _walk(self, leaf: _Node, group: str | None, candidates: list[_Node]) -> list[_Node]:
        """The records of ``group`` on the branch ending at ``leaf``, oldest first."""
        orders = [n.order for n in candidates]
        path: list[_Node] = []
        seen: set[str] = set()
        node: _Node | None = leaf
        while node is not None:
            if node.uuid in seen:
                self.source.warn(f"parentUuid cycle at {node.uuid!r}; branch cut", node.order[0])
                break
            seen.add(node.uuid)
            if node.group == group:
                path.append(node)
            if node.parent is None and node.linked:
                break  # a root
            parent = self.nodes.get(node.parent) if node.parent is not None else None
            if parent is None:
                parent = self._bridge(node, candidates, orders, seen)
            node = parent
        path.reverse()
        return path

    def _bridge(
        self, node: _Node, candidates: list[_Node], orders: list[Order], seen: set[str]
    ) -> _Node | None:
        """The record before ``node`` in the file, for a ``node`` whose parent is missing."""
        if node.parent is not None and node.parent not in self._dangling:
            self._dangling.add(node.parent)
            reason = f"parentUuid {node.parent!r} not found: record treated as a root"
            self.source.warn(reason, node.order[0])
        index = bisect_left(orders, node.order) - 1
        while index >= 0 and candidates[index].uuid in seen:
            index -= 1
        return candidates[index] if index >= 0 else None

    def _assemble(self, path: list[_Node]) -> tuple[list[Entry], list[tuple[Order, ToolCall]]]:
        assembler = Assembler(self.source, warn_unmatched=True, overwrite=True)
        calls: list[tuple[Order, ToolCall]] = []
        carried: _Node | None = None  # a record of usage alone, waiting for its child
        for node in path:
            if carried is not None and not self._carry(carried, node):
                self._usage_lost(carried)
            carried = node if node.usage is not None else None
            for item in node.items:
                if _repeats_command(assembler.entries, item):
                    continue
                assembler.add(item)
                if isinstance(item, ToolCall):
                    calls.append((node.order, item))
        if carried is not None:
            self._usage_lost(carried)
        return _settle_api_errors(assembler.entries), calls

    @staticmethod
    def _carry(carried: _Node, node: _Node) -> bool:
        """Whether ``node``, the record after a usage-only one, holds that response's usage:
        given it as its child, or (a child with a usage of its own) needing none."""
        if node.parent != carried.uuid:
            return False
        entries = [i for i in node.items if isinstance(i, Entry)]
        if any(getattr(e, "usage", None) for e in entries):
            return True
        return attach_usage(entries, carried.usage) is not None

    def _usage_lost(self, node: _Node) -> None:
        """A usage-only record whose child never came (a sub-agent cut off after the model
        answered), or had no entry to carry it. Warned, not kept on another entry: the
        response's entries are the child's, so any entry that is there is another response's,
        whose tokens it would inflate."""
        self.source.warn("a response's usage with no entry to carry it: tokens not counted",
                         node.order[0])  # fmt: skip

    def _link(
        self,
        key: str,
        members: list[_Node],
        child_entries: list[Entry],
        agents: list[tuple[Order, ToolCall]],
        linked: set[int],
        entries: list[Entry],
    ) -> None:
        """Nest a sidechain under the call that spawned it (see the module docstring)."""
        first = members[0]
        name = next((n.agent_name for n in members if n.agent_name), None)
        child = Transcript(
            child_entries,
            metadata={
                "source_format": NAME,
                "agent_id": key,
                **({"agent_name": name} if name else {}),
            },
        )
        spawner = self.spawned_by.get(key)
        own = [c for _, c in agents if spawner and c.call_id == spawner and id(c) not in linked]
        before = [
            c for o, c in sorted(agents, key=_first) if o <= first.order and id(c) not in linked
        ]
        named = [c for c in before if name and _agent_label(c) == name.casefold()]
        call = (own or named or before)[0] if own or before else None
        if call is None:
            reason = f"sidechain {key!r} not linked to the call that spawned it; shown at the end"
            self.source.warn(reason, first.order[0])
            call = ToolCall(
                name="agent", status="unknown", timestamp=first.timestamp,
                subagent=SubAgent(name=name), meta={"synthetic": "unlinked sidechain"},
            )  # fmt: skip
            entries.append(call)
        linked.add(id(call))
        agent = call.subagent or SubAgent(name=name)
        call.subagent = agent
        agent.agent_id = agent.agent_id or key
        agent.name = agent.name or name
        attach_child(agent, child)


def _mark_stopped_turns(entries: list[Entry]) -> list[Entry]:
    """An :class:`AbortMarker` after a turn that ends on a cancelled call and records no
    ``turn_result``: Qwen Code does not send a cancelled call's result on to the model, so the
    turn stopped there, but in ``-p`` mode (a SIGINT) the cancelled result is its last record."""
    out: list[Entry] = []
    for index, entry in enumerate(entries):
        out.append(entry)
        after = entries[index + 1] if index + 1 < len(entries) else None
        if (
            isinstance(entry, ToolCall)
            and entry.status == "cancelled"
            and (after is None or isinstance(after, UserMessage))
        ):
            out.append(stop("reader.cancelled", timestamp=entry.ended_at))
    return out


def _settle_api_errors(entries: list[Entry]) -> list[Entry]:
    """Each ``api_error`` notice as what followed it made it (see the module docstring): a
    response after it before the next prompt → retried, a warning; else the last one ended the
    turn → an :class:`AssistantError`, unless the turn's ``turn_result`` error follows (then it
    stays an error notice). Earlier failed attempts of that span were retried too: warnings."""
    out = list(entries)
    pending: list[int] = []  # indexes of the api_error notices not yet settled

    def settle(ended: bool) -> None:
        for index in pending[:-1] if ended else pending:
            cast(SystemNotice, out[index]).level = "warning"
        if ended and pending:
            last = cast(SystemNotice, out[pending[-1]])
            out[pending[-1]] = AssistantError(
                message=last.text, timestamp=last.timestamp, meta=dict(last.meta),
                wording=last.wording,
            )  # fmt: skip
        pending.clear()

    for index, entry in enumerate(entries):
        if isinstance(entry, SystemNotice) and entry.subtype == "api_error":
            pending.append(index)
        elif isinstance(entry, _RESPONSE):
            settle(ended=False)
        elif isinstance(entry, AssistantError):  # turn_result: the turn's failure, recorded
            del pending[-1:]  # its notice stays an error: the failure counts once
            settle(ended=False)
        elif isinstance(entry, UserMessage):
            settle(ended=True)
    settle(ended=True)
    return out


def _first(pair: tuple[Order, ToolCall]) -> Order:
    return pair[0]


def _agent_calls(calls: list[tuple[Order, ToolCall]]) -> list[tuple[Order, ToolCall]]:
    """The calls that spawn a sub-agent, each given what its source says of the sub-agent."""
    agents = [(o, c) for o, c in calls if is_agent_call(c.name) or _reports_agent(c)]
    for _, call in agents:
        call.subagent = _subagent(call)
    return agents


def _group(record: dict[str, Any]) -> str | None:
    if record.get("isSidechain") is not True:
        return None
    for key in ("agentId", "agentName"):
        if isinstance(record.get(key), str) and record[key]:
            return str(record[key])
    return "sidechain"


def _user_items(
    subtype: str | None,
    parts: list[dict[str, Any]],
    payload: dict[str, Any],
    stamp: str | None,
    line: int,
) -> list[Entry | PendingResult]:
    display = payload.get("displayText")
    # Context Qwen Code adds to a prompt's parts (hook output, reminders): not typed by the user.
    typed = [p for p in parts if not CONTEXT_BLOCK.match(_text(p.get("text")) or "")]
    text = display if isinstance(display, str) and display else joined_text(typed, sep="\n")
    items: list[Entry | PendingResult] = []
    if any("functionResponse" in p for p in parts):
        items += _responses(parts, {}, stamp, line)
    if subtype in _NOTICE_SUBTYPES:
        return (
            [SystemNotice(text=text, subtype=subtype, timestamp=stamp), *items] if text else items
        )
    images = images_of(parts)
    if text or images:
        message = UserMessage(text=text, timestamp=stamp)
        if images:
            message.meta["images"] = len(images)  # a prompt's pasted images are not modelled
        if isinstance(subtype, str):
            message.meta["subtype"] = subtype
        items.insert(0, message)
    return items


def _assistant_entries(
    record: dict[str, Any], parts: list[dict[str, Any]], stamp: str | None
) -> list[Entry]:
    model = record.get("model")
    cwd = record.get("cwd")
    return model_entries(
        parts,
        timestamp=stamp,
        batch_id=record["uuid"],
        model=model if isinstance(model, str) else None,
        usage=usage_from(record.get("usageMetadata")),
        thought_form="text",
        cwd=cwd if isinstance(cwd, str) else None,
    )


def _tool_results(
    record: dict[str, Any], parts: list[dict[str, Any]], stamp: str | None, line: int
) -> list[PendingResult]:
    outcome = record.get("toolCallResult")
    outcome = outcome if isinstance(outcome, dict) else {}
    results = list(_responses(parts, outcome, stamp, line))
    call_id = outcome.get("callId")
    if not results and isinstance(call_id, str):  # a result recorded only for the UI
        display = outcome.get("resultDisplay")
        status = _judged(_status(outcome), None, display, failed=False)
        result = build_result("", text=None, display=display, failed=status == "error")
        results.append(PendingResult(call_id, result, status, ended_at=stamp, line=line))
    return results


def _status(outcome: dict[str, Any]) -> ToolStatus | None:
    raw = outcome.get("status")
    return FINAL_STATUSES.get(raw) if isinstance(raw, str) else None


def _judged(
    recorded: ToolStatus | None, text: str | None, display: Any, *, failed: bool
) -> ToolStatus | None:
    """The status of a result: as recorded, unless the response carries an error or its text
    states a failure (Qwen Code records a failed shell command as ``success``; issue 23).
    None when nothing says how the call ended."""
    if failed and recorded != "cancelled":
        return "error"
    status = corrected_status(recorded or "unknown", text, display)
    return None if status == "unknown" else status


def _responses(
    parts: list[dict[str, Any]], outcome: dict[str, Any], stamp: str | None, line: int
) -> Iterable[PendingResult]:
    """Results of the ``functionResponse`` parts; ``outcome`` is the record's toolCallResult."""
    responses = [
        p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)
    ]
    images = images_of(parts)  # images a tool returned travel as sibling parts
    for response in responses:
        call_id = response.get("id")
        call_id = call_id if isinstance(call_id, str) else outcome.get("callId")
        if not isinstance(call_id, str):
            continue
        # The toolCallResult belongs to the response with its callId (or the only response).
        own = len(responses) == 1 or outcome.get("callId") == call_id
        text, failed = response_text(response.get("response"))
        display = outcome.get("resultDisplay") if own else None
        status = _judged(_status(outcome) if own else None, text, display, failed=failed)
        if text is None and own and outcome.get("error"):
            text = stringify(outcome["error"])
        name = response.get("name")
        result = build_result(
            name if isinstance(name, str) else "",
            text=text,
            display=display,
            images=images + images_of(response.get("parts")),
            failed=failed or status == "error",
            cancelled=status == "cancelled",
        )
        yield PendingResult(
            call_id, result, status, ended_at=stamp, line=line,
            name=name if isinstance(name, str) else "",
        )  # fmt: skip


def _compaction(payload: dict[str, Any], stamp: str | None) -> CompactionBoundary:
    info = payload.get("info")
    info = info if isinstance(info, dict) else {}
    boundary = CompactionBoundary(
        summary=_compression_summary(payload),
        pre_tokens=count_of(info, "originalTokenCount"),
        timestamp=stamp,
    )
    post = count_of(info, "newTokenCount")
    if post is not None:
        boundary.meta["post_tokens"] = post
    return boundary


def _compression_summary(payload: dict[str, Any]) -> str | None:
    """The payload's summary, else the compressed history's first user turn (the summary)."""
    summary = payload.get("summary")
    if isinstance(summary, str) and summary:
        return summary
    history = payload.get("compressedHistory")
    for content in history if isinstance(history, list) else []:
        if isinstance(content, dict) and content.get("role") == "user":
            return joined_text(as_parts(content.get("parts")), sep="\n") or None
    return None


def _slash_command(payload: dict[str, Any], stamp: str | None) -> list[Entry]:
    raw = payload.get("rawCommand")
    if payload.get("phase") == "invocation":
        if not isinstance(raw, str) or not raw.strip() or payload.get("hiddenInvocation") is True:
            return []
        command = raw.split()[0] if raw.startswith("/") else None
        # The command's arguments, as every reader keeps them (the view shows the command
        # before them): "/compress now" is /compress with "now".
        text = raw.strip()[len(command) :].strip() if command else raw
        return [UserMessage(text=text, command=command, timestamp=stamp)]
    items = payload.get("outputHistoryItems")
    outputs = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    text = "\n".join(i["text"] for i in outputs if isinstance(i.get("text"), str) and i["text"])
    if not text:
        return []
    failed = any(i.get("type") == "error" for i in outputs)
    return [
        SystemNotice(
            text=text, level="error" if failed else "info", subtype="slash_command", timestamp=stamp
        )
    ]


def _api_error(payload: dict[str, Any]) -> str | None:
    """The error message of a ``qwen-code.api_error`` telemetry event (a model request that
    failed after the SDK's own retries), "" when it says none, else None."""
    event = payload.get("uiEvent")
    if not isinstance(event, dict) or event.get("event.name") != "qwen-code.api_error":
        return None
    return _text(event.get("error_message")) or ""


def _api_error_notice(payload: dict[str, Any], stamp: str | None) -> SystemNotice:
    """An error notice for now: whether Qwen Code retried the request (its own retry layer) or
    it ended the turn is told by what follows it (:func:`_settle_api_errors`)."""
    event = payload["uiEvent"]
    said = _api_error(payload)
    entry = (
        SystemNotice(text=said, level="error", subtype="api_error", timestamp=stamp)
        if said
        else notice("reader.model_request_failed", level="error", subtype="api_error",
                    timestamp=stamp)
    )  # fmt: skip
    status = event.get("status_code")
    if isinstance(status, int) and not isinstance(status, bool):
        entry.meta["status_code"] = status
    return entry


def _turn_result(payload: dict[str, Any], stamp: str | None) -> list[Entry]:
    state = payload.get("state")
    if state == "cancelled":
        reason = payload.get("stopReason")
        return [AbortMarker(reason=reason if isinstance(reason, str) else None, timestamp=stamp)]
    error = payload.get("error")
    if state == "error" and isinstance(error, dict) and isinstance(error.get("message"), str):
        return [AssistantError(message=error["message"], timestamp=stamp)]
    return []


def _text(value: Any) -> str | None:
    """``value`` if it is a string: record fields are untrusted, and may not even be hashable."""
    return value if isinstance(value, str) else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):  # bool is an int
        return None
    return float(value)


def _repeats_command(entries: list[Entry], item: Entry | PendingResult) -> bool:
    """A prompt that repeats the slash command just recorded (sent on to the model) is one."""
    previous = entries[-1] if entries else None
    return (
        isinstance(item, UserMessage)
        and isinstance(previous, UserMessage)
        and previous.command is not None
        and " ".join(filter(None, (previous.command, previous.text.strip()))) == item.text.strip()
    )


def _reports_agent(call: ToolCall) -> bool:
    return call.result is not None and call.result.kind == "subagent"


def _display(call: ToolCall) -> dict[str, Any]:
    structured = call.result.structured if _reports_agent(call) and call.result else None
    return structured if isinstance(structured, dict) else {}


def _agent_label(call: ToolCall) -> str | None:
    args = call.args if isinstance(call.args, dict) else {}
    for value in (_display(call).get("subagentName"), args.get("subagent_type")):
        if isinstance(value, str) and value:
            return value.casefold()
    return None


def _subagent(call: ToolCall) -> SubAgent:
    """What the call's arguments and its ``task_execution`` display say of the sub-agent."""
    args = call.args if isinstance(call.args, dict) else {}
    display = _display(call)
    summary = display.get("executionSummary")
    summary = summary if isinstance(summary, dict) else {}

    def text(*values: Any) -> str | None:
        return next((v for v in values if isinstance(v, str) and v), None)

    tokens = count_of(summary, "outputTokens")
    return SubAgent(
        name=text(display.get("subagentName"), args.get("subagent_type")),
        task=text(args.get("description"), display.get("taskDescription"), args.get("prompt")),
        tool_count=count_of(summary, "totalToolCalls"),
        duration_ms=_float(summary.get("totalDurationMs")),
        output_tokens=tokens if tokens is not None else count_of(display, "tokenCount"),
        reason=text(display.get("terminateReason")),
    )
