"""Claude Code session JSONL (spec L-2.2): ``~/.claude/projects/<cwd>/<session>.jsonl``.

One JSON record per line; ``message.content`` holds Anthropic blocks, converted by
:mod:`turnfold.formats.anthropic_blocks`. Records map like this:

- ``user`` with text → :class:`UserMessage` (pasted images in ``images``; an attached
  ``document`` / ``file`` block as an ``[attachment: name · media type · size]`` line), except:
  ``isMeta`` lines (injected context, expanded command prompts) are not prompts;
  ``[Request interrupted by user…]`` → :class:`AbortMarker`, and the turn's calls still without a
  result become ``cancelled``; ``isCompactSummary`` → the summary of the preceding
  compaction boundary. One rule for harness notices: a text made of nothing but hyphenated tag
  elements (``<task-notification>``, ``<system-reminder>``, ``<command-…>``, ``<bash-…>``,
  ``<local-command-…>``, …) is never a prompt. By tag:
  ``<command-name>/x</command-name><command-args>a</command-args>`` → ``UserMessage(command="/x",
  text="a")``; ``<local-command-stdout>`` / ``-stderr`` → :class:`SystemNotice`
  (``subtype="local_command"``); ``<bash-input>`` (the ``!`` shell) → a user-initiated ``Bash``
  :class:`ToolCall` whose ``<bash-stdout>`` / ``<bash-stderr>`` line is its result (status
  ``unknown``: no exit code is recorded); ``<task-notification>`` (or ``origin.kind:
  task-notification``) → the outcome of the background call it names (below);
  ``<system-reminder>`` and ``<local-command-caveat>`` only give the model context (nothing, and
  removed from a prompt); any other wrapper → a notice of its inner text.
- ``user`` with ``tool_result`` blocks → the outcome of the call with that ``tool_use_id``
  (or the line's ``sourceToolUseID``): a rejection ("The user doesn't want to proceed…",
  ``[Request interrupted by user for tool use]``, ``toolDenialKind``) or an interrupted Bash →
  ``cancelled``; ``is_error`` or a ``<tool_use_error>`` → ``error``, as is a Task/Agent call
  whose report is the API error its sub-agent stopped on (:func:`failed_on_api_error`);
  otherwise ``success``. The line's ``toolUseResult`` shapes the result: ``structuredPatch`` →
  ``kind="diff"`` (a unified diff), TodoWrite → ``todo``, ExitPlanMode → ``plan`` (the plan
  text), Task/Agent → ``subagent`` (its ``content``: the sub-agent's report, less the words
  Claude Code wraps it in for the model); ``durationMs`` / ``totalDurationMs`` →
  ``duration_ms``. A result whose line comes before its call's (Claude Code 2.1.1xx writes the
  two in either order) waits for the call; one no call of the file takes is warned of.
- ``assistant`` → its blocks in order. One API response is written as several lines sharing
  ``message.id``: their calls form one batch (``batch_id = message.id``), tool_use blocks are
  deduplicated by id, and the response's ``usage`` is taken from its *last* line and put on its
  last text (or, when it wrote none, on its first thinking or call).
  ``isApiErrorMessage`` (or a ``<synthetic>`` message with an ``error``) → :class:`AssistantError`;
  a ``fallback`` block → :class:`SystemNotice`.
- ``system``: ``compact_boundary`` → :class:`CompactionBoundary` (``compactMetadata.trigger`` /
  ``preTokens``); ``api_error`` / ``error`` → :class:`AssistantError`, or a warning notice while
  Claude Code was still retrying; ``api_refusal`` → :class:`AssistantError`; ``stop_hook_summary``
  with hook errors, ``model_refusal_fallback``, ``informational``, ``local_command`` and any other
  subtype with text → :class:`SystemNotice`; ``turn_duration`` and ``session_start`` are skipped.
- ``system`` ``turn_duration`` → ``meta["turn_duration_ms"]`` of the turn's last text (or its
  prompt): the recorded duration beats the timestamp span in the turn header.
- ``attachment`` (context Claude Code adds for the model): ``queued_command`` typed by the user
  (``origin.kind: human``, or no origin) → a :class:`UserMessage` with ``meta["queued"]``, where
  the agent read it; one from another agent → a notice; a queued task notification → the outcome
  of its call. ``hook_system_message`` → a notice. The other types are left out by design
  (:data:`RECORDS` says why).
- ``progress``: ``agent_progress`` → a sub-agent's step (below); ``bash_progress`` (streaming
  output, the final result wins), ``hook_progress`` and the like are left out by design.
- ``summary`` / ``ai-title`` / ``custom-title`` → ``metadata["title"]`` (custom beats AI beats
  summary). ``cost-state`` → ``metadata["cost_usd"]`` (``totalCostUSD``, the running total: the
  last wins; spec H-6) and ``metadata["model_usage"]`` (``modelUsage``, what that cost is the
  price of: the tokens of sub-agents whose file is not beside the session,
  :func:`uncounted_subagent_usage`); ``api-request`` → ``metadata["model"]`` only when no
  response names a model (``params.model``, the model asked for); ``api-request-route`` →
  ``metadata["model_provider"]`` (its ``provider``; several routes in the order first taken).
  ``queue-operation``: an ``enqueue`` of a
  task or agent notification settles its call when nothing later does (Claude Code 2.0); a
  typed prompt's ``enqueue`` then a ``remove`` without content is the user's message, where the
  agent took it, when no attachment or user line shows it (2.1.5x); the rest is bookkeeping.
  Bookkeeping types (file-history-snapshot, last-prompt, mode, api-request-blob, …) are left
  out, keeping only their uuid links; any other type (and any unknown ``attachment`` or
  ``progress`` kind) is skipped with one warning per type, so a new Claude Code release does
  not flood the notice. Every record is accounted for (:data:`RECORDS`; spec X-2).

Background tasks: an ``Agent`` call with ``run_in_background`` returns at once
(``toolUseResult.status: "async_launched"``): it stays ``unknown`` (still running, as far as the
file says) until a ``<task-notification>`` whose ``<tool-use-id>``, or ``<task-id>`` = the call's
``agentId`` (a background command's ``backgroundTaskId``), names it: then ``<status>`` gives its
status, ``<result>`` its result (an agent without one keeps its launch's result:
:func:`background_agent_result`, as ``stream-json`` reads it; ``<summary>`` is the line the CLI
shows for the notification, a stopped or failed agent's reason), ``<usage>`` its duration and
tool count, the notification's time its end. A report handed back through ``SubagentHandback``
is the agent's result: on its call's ``toolUseResult.handbackReport`` (a foreground agent), or,
for a background agent, in the prompt the CLI queues for the main conversation (a
``queued_command`` attachment or a ``user`` line whose ``origin`` is ``kind: peer``,
``handback: true``, ``senderTaskId`` the agent's id: :func:`handback_origin_report`).
A notification that names no call is a notice. Claude Code 2.0 writes a background
agent's ``<agent-notification>`` (``<agent-id>``, ``<status>``, ``<summary>``) only in the
``queue-operation`` that queued it: that settles the call when no later notification does.

Models: each :class:`AssistantText` has its response's model; a response that wrote no text keeps
it in its first entry's ``meta["model"]``.

Fork seeds: Remote Control's ``remote-control/fork-seeds/<session>.json``, one JSON document
``{version: 1, parentSessionId, createdAt, messages}``, holds the start of a forked session that
no ``.jsonl`` holds (:data:`FORK_SEED`): read as a session of its own, its messages as records
chained in the order held, as Claude Code chains them when the fork resumes from them;
``parentSessionId`` → ``metadata["forked_from_id"]``, the file's name in that folder →
``session_id``. The fork's own ``.jsonl`` starts with a message whose ``parentUuid`` is the
seed's last: when a seed beside it (``<config dir>/remote-control/fork-seeds/``) holds that
message, the warning of the missing link names the seed, where the fork's first messages are,
and the seed's ``parentSessionId`` is the fork's ``metadata["forked_from_id"]``.

Branches: records form a uuid/parentUuid DAG (``logicalParentUuid`` bridges a compaction). The
active branch is the one ending at the last conversational record. A rewind leaves an older
branch that starts with a user prompt beside the active one and was written entirely before it;
such branches are dropped (``metadata["skipped_branches"]`` counts them). Everything else,
including records whose ``parentUuid`` points nowhere (a warning each), is kept in file order.

Sub-agents (Task / Agent calls) get a :class:`SubAgent` (``subagent_type`` → name, ``description``
→ task; ``toolUseResult`` ``agentId``, ``totalToolUseCount`` and ``totalDurationMs`` → stats; its
output tokens are counted from its transcript, each response once: ``toolUseResult.usage`` and
``totalTokens`` are the sub-agent's *last* response's alone, so they are used only for a
transcript read from ``agent_progress`` steps, which lack that response). Its transcript
comes from:

1. inline sidechains (≤ v1.0): ``isSidechain`` records starting at a user root with
   ``parentUuid: null``; the root is matched to the call by ``agentId`` or, failing that, by its
   text being the call's ``prompt``. An unmatched sidechain stays inline with a warning (a file
   that is nothing but one sidechain, such as an ``agent-*.jsonl`` loaded on its own, is simply
   read as the transcript);
2. given a path, ``agent-<agentId>.jsonl`` in ``<session>/subagents/`` (v2.1) or beside the
   session (v2.0), or the file whose ``agent-*.meta.json`` names the call in ``toolUseId``;
   child files are read by this same loader (their records are accounted for in the
   parent's accounting);
3. failing a file, the ``progress`` records of type ``agent_progress`` whose ``parentToolUseID``
   is the call (Claude Code 2.1 writes each step of a running sub-agent there): their
   ``data.message`` records, read in file order by this same loader. The file wins when both
   exist, so no call is counted twice; steps under a call that is no Task/Agent call still nest
   under it, steps under a call the file does not hold are a warning.

A sub-agent file of the session that no call names (in ``subagents/``, or beside the session
with its ``sessionId``) is shown at the end under a call of its own, with a warning; but a
warmup run (prompt ``Warmup``: Claude Code fills the prompt cache on its own, no call asked)
is no agent's work: its tokens are the session's side requests (U-1) and one notice names it
(:meth:`_Reader.account_warmups`).

The compaction agent's file, ``<session>/subagents/agent-acompact-<id>.jsonl`` (Claude Code
2.1.3x on: the conversation that wrote a compaction's summary, no call's), is shown under a
synthetic ``Agent`` call at the boundary it wrote (:meth:`_Reader.compaction_agent`).

A ``Workflow`` call's run (``toolUseResult.runId``) becomes its :class:`SubAgent`, whose
transcript holds one ``agent`` call per agent of the run, each with that agent's file as its own
sub-agent (:mod:`turnfold.formats.claude_code_workflows`).

Timestamps that are not ISO-8601 (``"[trimmed for fixture]"``) become ``None``, with one warning
for the whole file. Nothing is kept of the raw records but the entries built from them; the
entries are mutated freely while the file is read, because the transcript that observers see is
only assembled at the end (the active branch is not known before the last line).
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, TypeGuard

from turnfold import codec
from turnfold.formats import anthropic_blocks as blocks
from turnfold.formats import claude_code_workflows as workflows
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    as_list,
    checked_timestamp,
    describe_args,
    stringify,
    text_result,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.protocol import feed_each, read_through
from turnfold.formats.source import (
    NotListed,
    Source,
    folder_not_listed,
    found_file,
    join_warnings,
    json_object_file,
    keep_warning,
    once_a_folder,
    open_source,
    sibling_files,
)
from turnfold.formats.wording import failure, notice, worded
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    LoadWarning,
    SubAgent,
    SystemNotice,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
    Wording,
    span_ms,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.tools import format_token_count
from turnfold.usage import (
    USAGE_KINDS,
    Tokens,
    add_into,
    count_tokens,
    count_tokens_by,
    counts_of,
    has_subagent_tokens,
    transcript_tokens,
)

NAME = "claude-code"
#: What Claude Code keeps its secrets in, in its folder (``~/.claude``, a project's ``.claude``,
#: ``$CLAUDE_CONFIG_DIR``): the OAuth tokens of a login where no keychain is
#: (``.credentials.json``); the settings' ``env`` (any key, ``ANTHROPIC_API_KEY``) and
#: ``apiKeyHelper``, of ``settings.json`` and a project's ``settings.local.json``; and its global
#: config, ``.claude.json``, whose ``mcpServers`` (the user's, and each project's under
#: ``projects``) keep each server's ``env`` and ``headers`` as ``claude mcp add`` wrote them and
#: whose ``primaryApiKey`` is the key ``/login`` approved where no keychain is, with the copies
#: ``backups/.claude.json.backup.<ms>`` and the legacy ``.config.json`` it is read from when
#: present (all in the ``claude`` binary of ``@anthropic-ai/claude-code`` 2.1.332, the config's
#: path ``join(process.env.CLAUDE_CONFIG_DIR || homedir(), ".claude.json")``). Without the
#: variable that config sits in the home folder itself, beside ``.claude``: the home as Node's
#: ``homedir()`` reads it (``homes``), so a ``.claude.json`` anywhere else is nobody's, and no
#: other file right in the home is Claude Code's (its ``settings.json`` is ``.claude``'s, its
#: ``.config.json`` the config folder's). Its ``ide/<port>.lock`` files hold the IDE's
#: ``authToken`` (the ``ws-ide`` MCP config, ``.claude/ide`` in the binary); its
#: ``daemon/pipe.key`` the private nonce (16 hex digits, written with mode 0600) that names the
#: background daemon's pipes (``join(configDir, "daemon", "pipe.key")`` there). The machine's
#: managed settings, ``managed-settings.json``, its ``managed-settings.d/`` drop-ins and
#: ``managed-mcp.json``, of ``/etc/claude-code``, ``/Library/Application Support/ClaudeCode``
#: or ``C:\Program Files\ClaudeCode`` (``getManagedFilePath``, ``getDropInDir`` there), hold
#: an ``env``, an ``apiKeyHelper`` and MCP servers' ``env`` and ``headers`` as any settings;
#: named by their last names, so a scan of ``/`` or ``/etc`` (or of a Windows drive mounted in
#: WSL) opens none. A project's ``.mcp.json`` (its MCP servers' ``env`` and
#: ``headers``, as ``claude mcp add --scope project`` writes them; a plugin's too) lies in any
#: folder, which no folder's name or variable tells: named ``anywhere``, and hidden, so no walk
#: meets it either.
CREDENTIALS = Credentials(
    folders=frozenset({".claude"}),
    files=frozenset({
        ".credentials.json", "settings.json", "settings.local.json", ".claude.json",
        ".config.json", "backups/.claude.json.backup.*", "ide/*.lock", "daemon/pipe.key",
    }),
    variables=frozenset({"CLAUDE_CONFIG_DIR"}),
    anywhere=frozenset({".mcp.json"} | {
        f"{folder}/{name}"
        for folder in ("etc/claude-code", "Application Support/ClaudeCode",
                       "Program Files/ClaudeCode")
        for name in ("managed-settings.json", "managed-mcp.json", "managed-settings.d/*")
    }),
    homes=frozenset({".claude.json"}),
)  # fmt: skip

#: Remote Control's fork seed, in Claude Code's folder (``~/.claude``, ``$CLAUDE_CONFIG_DIR``):
#: ``remote-control/fork-seeds/<session>.json``. When claude.ai asks a session under Remote
#: Control to fork its conversation (``fork_conversation``, whole or before a message), Claude
#: Code makes the fork's session on the server and writes the messages it starts from to a file
#: named by the fork's id without its ``session_`` / ``cse_`` prefix (``vy``: the id's
#: ``sessionIdBody``; lowercased on macOS and Windows), ``JSON.stringify({version: 1,
#: parentSessionId, createdAt, messages})``, each message a record as the session held it in
#: memory, typed user, assistant, attachment, system or progress with its ``uuid`` (``vW``,
#: ``bW``, the schema ``A3``; the ``claude`` binary of ``@anthropic-ai/claude-code`` 2.1.332).
#: The fork's process takes them up at each start (``adoptSeed``, which refreshes the file's
#: time so the clean-up of old files keeps it) and counts them as already written
#: (``primeFilelessResume``): its own ``.jsonl`` never holds them, its first record's
#: ``parentUuid`` naming the seed's last message. So the seed is the only record on the machine
#: of how the fork began, its messages maybe a cloud session's; Claude Code deletes it only
#: when the fork is revoked or discarded, or the seed is found malformed, too large or bound to
#: no session. A session of its own, then (a row of a scan), never passed over. Its folder:
FORK_SEED = ("remote-control", "fork-seeds")
#: The record types a fork seed's messages are of (the schema's ``C3``).
_SEED_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})

#: Record types whose text is the session title, weakest first.
TITLE_KEYS = {"summary": "summary", "ai-title": "aiTitle", "custom-title": "customTitle"}
AGENT_TOOLS = NameSet({"Task", "Agent"})
_AGENT_TOOL_NAMES = frozenset(AGENT_TOOLS)

#: Top-level record types left out by design, and why (their uuid links stay in the DAG).
_IGNORED_TYPES: dict[str, str] = {
    "file-history-snapshot": "checkpoints of edited files, for rewinding; no conversation",
    "queue-operation": "the prompt queue's bookkeeping; a queued prompt is shown from its "
    "`queued_command` attachment, where the agent read it",
    "agent-name": "the agent's display name",
    "last-prompt": "a copy of the last prompt, for resuming",
    "permission-mode": "the permission mode setting",
    "mode": "the input mode setting",
    "pr-link": "a pull request linked to the session",
    "worktree-state": "git worktree bookkeeping",
    "bridge-session": "remote-control bridge bookkeeping",
    "frame-link": "a preview frame linked to the session",
    "relocated": "the session moved to another directory",
    "started": "a workflow step started (its agent's records carry the content)",
    "result": "a workflow step's result (its agent's records carry the content)",
    "atis-latch": "internal client state",
    "tag": "a session tag",
    "agent-color": "the agent's display colour",
    "agent-setting": "the agent's settings",
    "api-request-shape": "the system prompt and tool definitions sent to the model",
    "api-request-blob": "context blocks of a request, stored once by hash; the conversation "
    "records hold what was said",
    "tools-used": "the names of the tools used so far; the calls themselves are shown",
}
#: Top-level records without a uuid that give the session's metadata (Claude Code 2.1.332).
_METADATA_TYPES: dict[str, str] = {
    "cost-state": 'the session\'s cost so far: `metadata["cost_usd"]` (`totalCostUSD`, the last) '
    'and the tokens it prices, `metadata["model_usage"]` (`modelUsage`)',
    "api-request": 'the model a request asked for: `metadata["model"]` when no response names one',
    "api-request-route": "where the requests went (Claude Code 2.1.337): "
    '`metadata["model_provider"]` (`provider`: anthropic, bedrock, vertex, customEndpoint…); '
    "the kind of `credential` (key, login…) is not shown",
}
#: Record types that carry nothing to show; skipped without a warning (their uuid links stay).
BOOKKEEPING = NameSet({*_IGNORED_TYPES, *_METADATA_TYPES, "progress", "attachment"})

#: ``progress`` records by ``data.type``: only a sub-agent's steps carry content.
_IGNORED_PROGRESS: dict[str, str] = {
    "bash_progress": "streaming output of a running command; its final result is shown",
    "hook_progress": "a hook that is running; hooks that fail or speak leave a notice",
    "mcp_progress": "progress of a running MCP tool; its final result is shown",
    "query_update": "progress of a running search; its final result is shown",
    "search_results_received": "progress of a running search; its final result is shown",
    "waiting_for_task": "a wait on a background task; the task's notification is shown",
}
#: ``attachment`` records by ``attachment.type`` (context Claude Code adds for the model).
_IGNORED_ATTACHMENTS: dict[str, str] = {
    "agent_listing_delta": "the sub-agent types offered to the model",
    "auto_mode": "auto mode instructions for the model",
    "batching_reminder_sent": "a reminder to the model",
    "budget_usd": "the spending budget, for the model",
    "command_permissions": "the tools a slash command may use",
    "compact_file_reference": "a file re-read after a compaction",
    "critical_system_reminder": "a reminder to the model",
    "date": "today's date, for the model",
    "date_change": "the date, for the model",
    "deferred_tools_delta": "the tools offered to the model",
    "diagnostics": "IDE diagnostics given to the model",
    "directory": "a directory the user mentioned, listed for the model",
    "dynamic_skill": "skills offered to the model",
    "edited_image_file": "a file changed outside the session, for the model",
    "edited_text_file": "a file changed outside the session, for the model",
    "environment": "the working directory, platform and shell, for the model",
    "file": "a file the user mentioned, read for the model (the prompt names it)",
    "hook_additional_context": "context a hook gave the model",
    "hook_blocking_error": "a hook's blocking error; the blocked call's result says so",
    "hook_cancelled": "a hook that was cancelled",
    "hook_error_during_execution": "a hook that failed to run",
    "hook_non_blocking_error": "a hook's error that stopped nothing",
    "hook_permission_decision": "a hook's permission decision; the call's result says so",
    "hook_success": "a hook that ran without a message",
    "invoked_skills": "skills the model invoked, for the model",
    "mcp_instructions_delta": "MCP server instructions for the model",
    "mcp_resource": "an MCP resource the user mentioned, read for the model",
    "model": "the model's name and knowledge cutoff, for the model (each response names its model)",
    "nested_memory": "a CLAUDE.md memory file read for the model",
    "opened_file_in_ide": "the file open in the IDE, for the model",
    "plan_file_reference": "the plan file, for the model",
    "plan_mode": "plan mode instructions for the model",
    "plan_mode_exit": "plan mode ended, for the model",
    "plan_mode_reentry": "plan mode instructions for the model",
    "prompt_snapshot": "the system prompt, for the model",
    "read_truncation_notice": "a note to the model that a read was cut",
    "remote_session_change": "commit and pull request attribution lines, for the model",
    "selected_lines_in_ide": "lines selected in the IDE, for the model",
    "session_context": "session context for the model",
    "silent_turn_reminder": "a reminder to the model",
    "skill_listing": "skills offered to the model",
    "task_reminder": "the task list, for the model",
    "task_status": "a background task's status, for the model",
    "todo_reminder": "the todo list, for the model",
    "token_usage": "the context's token usage, for the model",
    "total_tokens_reminder": "a reminder to the model",
    "ultra_effort_enter": "effort level instructions for the model",
    "ultra_effort_exit": "effort level instructions for the model",
    "ultramemory": "memory given to the model",
}
#: ``system`` records by subtype; any other subtype with text becomes a notice.
_SYSTEM_MAPPED: dict[str, str] = {
    "compact_boundary": "a compaction boundary (trigger, tokens before)",
    "api_error": "an assistant error, or a warning notice while Claude Code still retried",
    "error": "an assistant error, or a warning notice while Claude Code still retried",
    "api_refusal": "an assistant error: the request was refused",
    "stop_hook_summary": "a warning notice when hooks failed; nothing otherwise",
    "turn_duration": "the turn's recorded duration (`durationMs`), shown in its header",
    "informational": "a notice",
    "local_command": "a notice with the command's output",
    "model_refusal_fallback": "a notice: the model fell back to another",
}
_SYSTEM_IGNORED: dict[str, str] = {"session_start": "the session started; nothing to show"}

RECORDS = Records(
    mapped={
        "user": "the user's prompt (a slash command, a `!` shell call), tool results, "
        "background task notifications (the outcome of their call), harness notices",
        "assistant": "text, thinking and tool calls of one response (lines merged by message id)",
        **{f"system/{k}": v for k, v in _SYSTEM_MAPPED.items()},
        "system": "other subtypes: a notice of their text",
        "summary": "the session title (weakest)",
        "ai-title": "the session title",
        "custom-title": "the session title (strongest)",
        **_METADATA_TYPES,
        "progress/agent_progress": "a sub-agent's step, when no sub-agent file holds its steps",
        "attachment/queued_command": "a prompt typed while the agent worked, where it read it; "
        "from another agent, a notice; a task notification, the outcome of its call",
        "attachment/hook_system_message": "a notice with the hook's message",
        "queue-operation/notification": "a background task's notification as it was queued: "
        "the outcome of its call when no delivered notification gives it (Claude Code 2.0 "
        "writes an agent's nowhere else)",
        "queue-operation/prompt": "a prompt typed while the agent worked: the user's message, "
        "where a `remove` says the agent took it, when no attachment or later prompt shows it "
        "(Claude Code 2.1.5x writes it nowhere else)",
        "fork-seed": "Remote Control's fork seed: the start of a forked session, its messages "
        'read in order as the session\'s records; `metadata["forked_from_id"]` its '
        "`parentSessionId`",
    },
    ignored={
        "user/isMeta": "context Claude Code injects (expanded commands, caveats), not the "
        "user's words",
        **{f"system/{k}": v for k, v in _SYSTEM_IGNORED.items()},
        **_IGNORED_TYPES,
        "progress": "a progress record of no kind: nothing to show",
        "attachment": "an attachment of no kind: nothing to show",
        **{f"progress/{k}": v for k, v in _IGNORED_PROGRESS.items()},
        **{f"attachment/{k}": v for k, v in _IGNORED_ATTACHMENTS.items()},
    },
)
_INTERRUPTED = "[Request interrupted by user"
_REJECTED = ("The user doesn't want to proceed", "The user doesn't want to take this action")
_TOOL_ERROR = "<tool_use_error>"
#: How the text of the message Claude Code writes for a failed API request begins (its ``CX``
#: constant, then ``: …``), or the same after the hint it puts before a 401's: what its own
#: ``Fc`` (2.1.79's ``cli.js``) tells such a message by, to show it as an error.
_API_ERROR = ("API Error", "Please run /login · API Error")
_LEVELS = ("info", "warning", "error")


# --- detection ----------------------------------------------------------------------------------


def _is_message_record(value: Any) -> bool:
    """A user/assistant line: envelope ids plus an Anthropic ``message`` (Qwen's has ``parts``)."""
    if not isinstance(value, dict) or value.get("type") not in ("user", "assistant"):
        return False
    message = value.get("message")
    return (
        isinstance(message, dict)
        and "content" in message
        and "parts" not in message
        and isinstance(value.get("uuid"), str)
        and "sessionId" in value
    )


def _is_claude_only_record(value: Any) -> bool:
    """Record shapes only Claude Code writes; a session may start with several of them."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    return (kind == "file-history-snapshot" and "snapshot" in value) or (
        kind == "summary" and "leafUuid" in value
    )


def _classify(value: Any) -> int:
    if _is_message_record(value) or _is_claude_only_record(value):
        return DISTINCTIVE
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return NOT_MINE
    if value["type"] in ("user", "assistant"):
        message = value.get("message")
        # A broken line of a session is still the session's (Qwen's lines have ``parts``).
        qwen = isinstance(message, dict) and "parts" in message
        return READABLE if "sessionId" in value and not qwen else NOT_MINE
    if value["type"] in BOOKKEEPING or value["type"] in TITLE_KEYS:
        # Record types no other agent writes; with the session's id, a session's own line.
        return DISTINCTIVE if "sessionId" in value else READABLE
    if "sessionId" in value:
        # System records. Qwen Code writes ``system`` lines of its own, never ``userType``.
        return DISTINCTIVE if "userType" in value else READABLE
    return NOT_MINE


def is_fork_seed(value: Any) -> TypeGuard[dict[str, Any]]:
    """Whether ``value``, a JSON document, is Remote Control's fork seed (:data:`FORK_SEED`):
    version 1, the id of the session it was forked from, and messages (weighed by
    :func:`detect`). Its ``createdAt`` is not asked for: a seed whose time is broken still holds
    the session's messages."""
    return (
        isinstance(value, dict)
        and value.get("version") == 1
        and isinstance(value.get("parentSessionId"), str)
        and isinstance(value.get("messages"), list)
    )


def _classify_seed_message(value: Any) -> int:
    """A fork seed's message as Claude Code's schema takes it (``P3``): a record of a session's
    type with its ``uuid``."""
    kind = value.get("type") if isinstance(value, dict) else None
    if isinstance(kind, str) and kind in _SEED_TYPES:
        return DISTINCTIVE if isinstance(value.get("uuid"), str) else READABLE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """Claude Code message lines (uuid, sessionId, Anthropic ``message``) and its bookkeeping;
    or a fork seed, its messages weighed."""
    document = source.document if source.is_document else None
    if is_fork_seed(document):
        return Evidence.of(document["messages"][:60], _classify_seed_message,
                           "no message of a session (type and uuid) in the fork seed")  # fmt: skip
    return Evidence.of(
        source.head_values(), _classify, "no user/assistant line with uuid, sessionId, message"
    )


# --- reading --------------------------------------------------------------------------------------


class _Node:
    """What one record contributes: its entries and its place in the uuid DAG.

    A plain class with slots rather than a dataclass: one is made for every record, and the
    dataclass's keyword defaults make that call a third slower.
    """

    __slots__ = ("conversational", "entries", "line", "logical_parent", "parent", "prompt", "uuid")

    def __init__(self, line: int, uuid: str | None, parent: str | None) -> None:
        self.line = line
        self.uuid = uuid
        self.parent = parent
        self.logical_parent: str | None = None
        self.entries: list[Entry] = []
        self.prompt = False  # a real user prompt: where a rewind starts a new branch
        self.conversational = False


@dataclass(slots=True)
class _Thread:
    """One conversation in the file: the main one, or an inline sub-agent sidechain."""

    root_line: int = 0
    prompt: str | None = None
    agent_id: str | None = None
    nodes: list[_Node] = field(default_factory=list)
    open_calls: list[ToolCall] = field(default_factory=list)  # this turn's calls, for interrupts
    boundary: CompactionBoundary | None = None  # waiting for its isCompactSummary line
    shell: ToolCall | None = None  # a `!` command waiting for its output line
    last_prompt: UserMessage | None = None  # this turn's prompt and last text: where a
    last_text: AssistantText | None = None  # recorded turn duration goes


@dataclass(slots=True)
class _EarlyResult:
    """A ``tool_result`` block read before its call's line: what :meth:`_Reader.settle` needs."""

    block: dict[str, Any]
    record: dict[str, Any]
    extra: Any
    stamp: str | None
    line: int


@dataclass(slots=True)
class _Response:
    """One API response merged over its lines: its last text and the usage of its last line."""

    text: AssistantText | None = None
    usage: Any = None  # the raw usage object, converted once at the end
    first: Entry | None = None  # where the model goes when the response wrote no text
    model: str | None = None


@dataclass(slots=True)
class _Spawn:
    """A Task/Agent call and what links it to its sub-agent transcript."""

    call: ToolCall
    line: int
    prompt: str | None
    agent_id: str | None = None
    #: The line of the record that gave ``agent_id``: where a warning about it points.
    agent_id_line: int | None = None
    thread: _Thread | None = None
    #: The usage of the response that ended the agent's run, as its result records it
    #: (``toolUseResult.usage``): :func:`_with_last_response`.
    last_usage: Usage | None = None


@dataclass(slots=True)
class _Steps:
    """A sub-agent's steps as the parent file records them (``progress/agent_progress``)."""

    agent_id: str | None = None
    agent_id_line: int | None = None  # the line of the record that gave ``agent_id``
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


@dataclass
class _Context:
    """Where sub-agent files are looked up, shared by a session and the sub-agents it loads."""

    dirs: tuple[Path, ...] = ()
    loading: frozenset[Path] = frozenset()
    #: The sub-agent files a call of the session or of any of its sub-agents named
    #: (:meth:`_Reader.child_file`): one set for them all, so that the file of a sub-agent's
    #: own sub-agent is not shown again at the end as one no call names.
    claimed: set[Path] = field(default_factory=set)
    _meta_links: dict[str, Path] | None = None
    #: The session's Workflow runs (:mod:`.claude_code_workflows`), one object for them all.
    workflow_runs: workflows.WorkflowRuns = field(default_factory=workflows.WorkflowRuns)
    #: The folders of the session said not to be listed (:meth:`_Reader.unlisted`): each once,
    #: though several lookups list it.
    unlisted_folders: set[Path] = field(default_factory=set)

    def meta_links(self, unlisted: NotListed) -> dict[str, Path]:
        """``toolUseId`` → agent file, from the ``agent-*.meta.json`` files (read once); a
        folder that cannot be listed is told to ``unlisted``."""
        if self._meta_links is None:
            self._meta_links = {}
            for directory in self.dirs:
                for meta in sibling_files(directory, "agent-*.meta.json", unlisted):
                    tool_use_id = json_object_file(meta).get("toolUseId")
                    target = meta.with_name(meta.name.replace(".meta.json", ".jsonl"))
                    if isinstance(tool_use_id, str) and found_file(target, unlisted):
                        self._meta_links.setdefault(tool_use_id, target)
        return self._meta_links


def _context_for(path: Path | None) -> _Context:
    if path is None:
        return _Context()
    dirs = [path.parent / path.stem / "subagents", path.parent]
    return _Context(
        dirs=tuple(d for d in dirs if _may_hold(d)),
        loading=frozenset({path}),
        workflow_runs=workflows.WorkflowRuns(path.parent / path.stem),
    )


def read(source: Source) -> Transcript:
    """A transcript from Claude Code records; warnings go through ``source.warn``."""
    if source.is_document and is_fork_seed(source.document):
        return _read_fork_seed(source)
    return read_through(reader(source))


def _read_fork_seed(source: Source) -> Transcript:
    """A fork seed (:data:`FORK_SEED`) read as a session: its messages fed as records, chained as
    the fork's process chains them when it resumes from them (``efl``: each one's ``parentUuid``
    the last message's before it but a ``progress`` record's, ``isSidechain`` false, the order
    held the conversation's), so no message is taken for a rewind's branch or a sidechain."""
    reader = _Reader(source, _Context())  # no sub-agent file is kept beside a seed
    # The messages' own sessionId is the session they were held in, not the fork's: Claude
    # Code names the file by the fork's id, in its folder of seeds (elsewhere, any name).
    del reader.envelope_keys["sessionId"]
    if source.path is not None and source.path.parent.parts[-2:] == FORK_SEED:
        reader.metadata["session_id"] = source.path.stem
    for line, seed in source.records():
        source.mapped("fork-seed")
        reader.metadata["forked_from_id"] = seed["parentSessionId"]
        feed_each(reader, ((line, record) for record in _chained(seed["messages"])))
    return reader.finish()


def _chained(messages: list[Any]) -> Iterator[Any]:
    """A fork seed's messages as records of a session file: each linked to the message before
    it; one that is no object is handed on as it is, for the reader to warn of."""
    parent: str | None = None
    for message in messages:
        if not isinstance(message, dict):
            yield message
            continue
        yield {**message, "parentUuid": parent, "isSidechain": False}
        uuid = message.get("uuid")
        if message.get("type") != "progress" and isinstance(uuid, str):
            parent = uuid


class _SeedMessages:
    """The messages of the fork seeds in the Claude Code folder a session file is in
    (``<config dir>/projects/<project>/<session>.jsonl`` beside
    ``<config dir>/remote-control/fork-seeds/``), by uuid: what a fork's own file links its
    first message to. A seed is named by the fork's server session id (its body, ``vy``), which
    the fork's file does not hold, so a seed is found by the message it holds; the folder is
    read once, and only for a file with a ``parentUuid`` that is none of its records."""

    def __init__(self, session: Path | None, unlisted: NotListed) -> None:
        self.session = session
        self.unlisted = unlisted  # told of the folder of seeds when it cannot be listed
        self._found: dict[str, tuple[Path, str]] | None = None

    def holding(self, uuid: str) -> tuple[Path, str] | None:
        """The seed holding the message ``uuid`` and the id of the session it was forked
        from, or None."""
        if self._found is None:
            self._found = self._read()
        return self._found.get(uuid)

    def _read(self) -> dict[str, tuple[Path, str]]:
        found: dict[str, tuple[Path, str]] = {}
        session = self.session
        if session is None or session.parent.parent.name != "projects":
            return found
        folder = session.parent.parent.parent.joinpath(*FORK_SEED)
        for path in sibling_files(folder, "*.json", self.unlisted):
            seed = json_object_file(path)
            if not is_fork_seed(seed):
                continue  # no seed Claude Code would take up: no fork continues it
            for message in seed["messages"]:
                uuid = message.get("uuid") if isinstance(message, dict) else None
                if isinstance(uuid, str):
                    found.setdefault(uuid, (path, seed["parentSessionId"]))
        return found


def reader(source: Source) -> _Reader:
    """A pass over ``source``'s records fed one at a time, which a growing file's scan can
    pause and resume (:mod:`turnfold.formats.resume`)."""
    return _Reader(source, _context_for(source.path))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _tag(text: str, name: str) -> str | None:
    """The text inside ``<name>…</name>``, or None (plain ``find``: no regex per line)."""
    start = text.find(f"<{name}>")
    if start < 0:
        return None
    start += len(name) + 2
    end = text.find(f"</{name}>", start)
    return text[start:] if end < 0 else text[start:end]


def _without_reminders(text: str) -> str:
    """User text without the ``<system-reminder>`` blocks Claude Code injects into it."""
    while (start := text.find("<system-reminder>")) >= 0:
        end = text.find("</system-reminder>", start)
        text = text[:start] if end < 0 else text[:start] + text[end + len("</system-reminder>") :]
    return text


class _Reader:
    """Reads one session file in a single pass, then assembles the transcript."""

    def __init__(
        self,
        source: Source,
        context: _Context,
        steps: dict[str, _Steps] | None = None,
        depth: int = 0,
        session: Source | None = None,
    ) -> None:
        self.source = source
        self.context = context
        #: The source of the session file loaded, whose warnings the view shows: a sub-agent's
        #: own are kept in its transcript, out of sight, so what nests too deep is said here.
        self.session = session or source
        #: How many sub-agents deep this reader's transcript nests (the session's is 0): its
        #: calls' sub-agents nest down to :data:`~turnfold.nesting.MAX_DEPTH`, no deeper.
        self.depth = depth
        #: The calls whose sub-agent nests past that bound: its steps are recorded, not shown.
        self.past_bound: set[str] = set()
        #: Sub-agent steps by the id of the call that spawned the agent. A sub-agent built from
        #: them shares the dict (its own sub-agents' steps are in it); its owner warns about
        #: the steps no call took.
        self.owns_steps = steps is None
        self.steps: dict[str, _Steps] = {} if steps is None else steps
        self.background: dict[str, ToolCall] = {}  # background task id → its call
        self.notified: set[str] = set()  # calls a task notification has settled
        #: Reports background agents handed back (:meth:`handed_back`), by call id, with the
        #: time each came: the agent's result, whichever comes first of it and the notification.
        self.handbacks: dict[str, tuple[str, str | None]] = {}
        #: The model each background agent ran on (its launch's ``resolvedModel``), by call id.
        self.agent_models: dict[str, str] = {}
        #: Notifications as they were queued, each kept until the end: the outcome of a
        #: background call that no delivered notification gives (:meth:`queue_operation`).
        self.queued_notices: list[tuple[dict[str, str], str | None]] = []
        #: Prompts typed while the agent worked, still in the queue (text, time typed), and
        #: those shown from the queue alone, by text (:meth:`queue_operation`).
        self.typed: list[tuple[str, str | None]] = []
        self.absorbed: dict[str, _Node] = {}
        self.main = _Thread()
        self.sidechains: list[_Thread] = []
        self.thread_of: dict[str, _Thread] = {}  # every uuid seen → its thread
        self.calls: dict[str, ToolCall] = {}
        #: Results read before the line of their call, by call id (:meth:`settle`).
        self.early_results: dict[str, list[_EarlyResult]] = {}
        self.responses: dict[str, _Response] = {}
        self.spawns: list[_Spawn] = []
        self.spawn_of: dict[str, _Spawn] = {}  # call id → spawn
        #: The ``agentId`` values no file was looked for by (:meth:`child_file`): each said once.
        self.refused_agent_ids: set[str] = set()
        self.workflow_launches: list[workflows.WorkflowLaunch] = []
        self.metadata: dict[str, Any] = {"source_format": NAME}
        self.cwd: str | None = None  # the session's working directory, once a record gives it
        self.titles: dict[str, str] = {}
        #: The sub-agent files a call of the session named (:meth:`child_file`), its
        #: sub-agents' included (:attr:`_Context.claimed`).
        self.claimed_files = context.claimed
        #: Each ``summary`` record's text and the message it summarises (``leafUuid``).
        self.summaries: list[tuple[str, str | None]] = []
        self.requested_model: str | None = None  # from api-request records
        self.recognised = False
        self.first_line: int | None = None
        self.bad_times: list[int] = []
        #: Lines whose queued command's own time is no time, shown at its line's time.
        self.bad_queued_times: list[int] = []
        self.unknown_types: dict[str, list[int]] = {}
        self.unknown_blocks: set[str] = set()
        self.envelope_keys = {"sessionId": "session_id", "cwd": "cwd", "version": "version",
                              "gitBranch": "git_branch"}  # fmt: skip

    # --- the pass over the records -----------------------------------------------------------

    def feed(self, line: int, record: Any) -> None:
        """Read one record (the source's current one)."""
        if self.first_line is None:
            self.first_line = line
        if isinstance(record, MalformedLine):
            self.source.warn(record.reason, line)
        elif not isinstance(record, dict):
            self.source.warn("not a JSON object; skipped", line)
        else:
            try:
                self.add(line, record)
            except (TypeError, ValueError, AttributeError, KeyError) as exc:
                # A record of an unforeseen shape costs its own line, never the load (L-4).
                self.source.warn(f"unreadable {record.get('type')!r} record: {exc}", line)

    def finish(self) -> Transcript:
        """The transcript of the records fed; the reader takes no more after it."""
        if not self.recognised:
            raise TranscriptFormatError(
                self.source.name, [NAME], self.first_line, "no Claude Code records"
            )
        return self.assemble_transcript()

    def add(self, line: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        # _str, written out: this runs for every record.
        uuid, parent = record.get("uuid"), record.get("parentUuid")
        uuid = uuid if isinstance(uuid, str) and uuid else None
        parent = parent if isinstance(parent, str) and parent else None
        message_line = kind in _MESSAGE_TYPES
        if message_line and not _claude_shaped(kind, record.get("message")):
            self.source.warn(f"{kind} record without Claude Code message content; skipped", line)
            handler = None
        elif handler is not None:
            self.recognised = True
        elif kind in TITLE_KEYS:
            self.recognised = True
            self.source.mapped(kind)
            self.title(kind, record)
        elif kind in _METADATA_TYPES:
            self.recognised = True
            self.source.mapped(kind)
            self.session_fact(kind, record)
        elif kind == "queue-operation":
            self.recognised = True
            self.queue_operation(record, line)
        elif kind in _IGNORED_TYPES:
            self.recognised = True
            self.source.ignored(kind)
        else:
            self.unknown(str(kind), line)
        if handler is None and uuid is None:
            return
        if record.get("isSidechain") is True:
            thread = self.sidechain_thread(record, line, parent)
        else:
            thread = self.main  # a sub-agent's conversation holds only sidechain records
        if uuid is not None:
            self.thread_of.setdefault(uuid, thread)
        node = _Node(line, uuid, parent)
        if handler is not None:
            node.conversational = message_line
            if self.envelope_keys and message_line:
                self.envelope(record)
            handler(self, record, line, thread, node)
        thread.nodes.append(node)

    def unknown(self, record_type: str, line: int) -> None:
        """A record type this loader does not know: one warning per type, at the end."""
        self.unknown_types.setdefault(record_type, []).append(line)
        self.source.note(record_type, "warned")

    def sidechain_thread(self, record: dict[str, Any], line: int, parent: str | None) -> _Thread:
        """The conversation of a sidechain record: its parent's, or a new inline sidechain."""
        if parent is not None and parent in self.thread_of:
            return self.thread_of[parent]
        if record.get("type") == "user" and parent is None:
            thread = _Thread(root_line=line, agent_id=_str(record.get("agentId")))
            thread.prompt = _plain_text(record["message"].get("content"))
            self.sidechains.append(thread)
            return thread
        return self.main

    def envelope(self, record: dict[str, Any]) -> None:
        """Session facts from the first record that has each (looked for until all are found)."""
        for key, name in list(self.envelope_keys.items()):
            if _str(record.get(key)):
                self.metadata[name] = record[key]
                del self.envelope_keys[key]
                if key == "cwd":
                    self.cwd = record[key]

    def timestamp(self, record: dict[str, Any], line: int) -> str | None:
        value = record.get("timestamp")
        if type(value) is str and value:
            # checked_timestamp's common case, written out: this runs for every record.
            try:
                datetime.fromisoformat(value)
                return value
            except ValueError:
                pass
        stamp = checked_timestamp(value)
        if stamp is None and value is not None:
            self.bad_time(line)
        return stamp

    def bad_time(self, line: int) -> None:
        """A time on ``line`` that is no time, said with the others at the end; a line with
        two (a queued command's own and its record's) is one line without a time."""
        if not self.bad_times or self.bad_times[-1] != line:
            self.bad_times.append(line)

    def session_fact(self, kind: str, record: dict[str, Any]) -> None:
        """``cost-state``: the cost Claude Code computed (spec H-6), each record the running
        total, so the last wins; ``api-request``: the model asked for, kept in case no
        response names one (a session of failed requests); ``api-request-route``: the provider
        the requests went to, written again with each flush, so each distinct one once."""
        if kind == "api-request-route":
            provider = _str(record.get("provider"))
            taken = self.metadata.get("model_provider", "")
            # "unrecorded" is Claude Code's word for a route it did not record.
            if provider and provider != "unrecorded" and provider not in taken.split(", "):
                self.metadata["model_provider"] = f"{taken}, {provider}" if taken else provider
        elif kind == "cost-state":
            cost = record.get("totalCostUSD")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
                self.metadata["cost_usd"] = float(cost)
            model_usage = record.get("modelUsage")
            if isinstance(model_usage, dict) and model_usage:
                self.metadata["model_usage"] = model_usage
        else:
            params = record.get("params")
            model = _str(params.get("model")) if isinstance(params, dict) else None
            self.requested_model = model or self.requested_model

    def title(self, kind: str, record: dict[str, Any]) -> None:
        text = _str(record.get(TITLE_KEYS[kind]))
        if text and kind == "summary":
            self.summaries.append((text, _str(record.get("leafUuid"))))
        elif text:
            self.titles[kind] = text

    # --- user lines ---------------------------------------------------------------------------

    def user(self, record: dict[str, Any], line: int, thread: _Thread, node: _Node) -> None:
        stamp = self.timestamp(record, line)
        content = record["message"].get("content")
        results: list[dict[str, Any]] = []
        texts: list[str] = []
        images: list[ImageData] = []
        for part in content if isinstance(content, list) else [content]:
            if isinstance(part, str):
                texts.append(part)
                continue
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "image" and (image := blocks.image_of(part)) is not None:
                images.append(image)
            elif blocks.is_result_type(kind):
                results.append(part)
            elif kind in blocks.ATTACHMENT_TYPES or kind == "image":
                texts.append(blocks.attachment_line(part))  # the user attached it: say so
            elif isinstance(kind, str):
                self.unknown_block(kind, line)
        compact = record.get("isCompactSummary") is True
        if not results and not compact and self.handed_back(record.get("origin"), stamp, node):
            self.source.note("user", "mapped")
            return
        injected = record.get("isMeta") is True and not results and not compact
        # isMeta: context Claude Code injects (expanded commands, caveats), not the user's words.
        self.source.note("user/isMeta" if injected else "user", "ignored" if injected else "mapped")
        for block in results:
            # toolUseResult describes the line's result only when the line holds just one.
            extra = record.get("toolUseResult") if len(results) == 1 else None
            self.settle(block, record, extra, stamp, line)
        if compact:
            self.compact_summary(thread, "\n\n".join(texts), stamp, node)
        elif not injected:
            text = "\n\n".join(t for t in texts if t.strip())
            if text or images:
                self.user_text(text, images, record, stamp, thread, node)

    def user_text(
        self,
        text: str,
        images: list[ImageData],
        record: dict[str, Any],
        stamp: str | None,
        thread: _Thread,
        node: _Node,
    ) -> None:
        """A user line's text, read by :func:`user_text_entries`: an interrupt, a harness
        notice or the user's prompt; the kinds that depend on the session (an interrupt, a
        notification, the ``!`` shell) are shown here with what the reader knows of it."""
        origin = record.get("origin")
        notified = isinstance(origin, dict) and origin.get("kind") == "task-notification"
        read = user_text_entries(text, stamp)
        if read.kind == "interrupt":
            self.interrupt(thread, read.shown[0], node)
        elif notified or read.kind == "task_notification":
            self.notification(text, stamp, node)
        elif read.kind == "shell_input":
            self.shell_input(text, record, stamp, thread, node)
        elif read.kind == "shell_output":
            self.shell_output(text, stamp, thread)
        elif read.kind in ("command", "prompt"):
            message = next(iter(read.shown), None)
            if message is None and images:  # pasted images alone are a prompt too
                message = UserMessage(text="", timestamp=stamp)
            if isinstance(message, UserMessage):
                message.images = images
                if read.kind == "prompt":
                    self.shown_prompt(message.text)
                node.entries.append(message)
                self.new_turn(thread, node, message)
        else:  # a local command's output, a harness notice, or context alone (nothing)
            node.entries.extend(read.shown)

    def new_turn(self, thread: _Thread, node: _Node, prompt: UserMessage) -> None:
        node.prompt = True
        thread.open_calls.clear()
        thread.last_prompt, thread.last_text = prompt, None

    def handed_back(self, origin: Any, stamp: str | None, node: _Node) -> bool:
        """A background agent's report handed back through ``SubagentHandback``, queued for
        the main conversation as a prompt (``origin.kind: peer``, ``handback: true``; a
        ``queued_command`` attachment, or a ``user`` line): the result of the call that
        launched the agent (``senderTaskId``), kept for the end (:meth:`settle_handbacks`).
        One from an agent no call launched is a notice of its report (X-2). False where the
        line is no hand-back."""
        if not (isinstance(origin, dict) and origin.get("kind") == "peer"
                and origin.get("handback") is True):  # fmt: skip
            return False
        report = handback_origin_report(origin)
        if report is None:
            return False  # nothing readable as a report: read as any other message
        call = self.background.get(_str(origin.get("senderTaskId")) or "")
        if call is not None and call.subagent is not None:
            self.handbacks[call.call_id] = (report, stamp)
            return True
        sender = _str(origin.get("from"))
        key = "reader.message_from" if sender else "reader.message_of_kind"
        params = {"sender": sender, "kind": "peer", "said": report}
        node.entries.append(notice(key, params, subtype="queued_command", timestamp=stamp))
        return True

    def settle_handbacks(self) -> None:
        """Each handed-back report is its agent's result, whatever its notification's
        ``<result>`` or ``<summary>`` said: handing back ends the agent's run (the CLI's
        ``SubagentHandback``: "the call ends your run"), so an outcome not yet known is a
        success at the time it came."""
        for call_id, (report, stamp) in self.handbacks.items():
            call = self.calls[call_id]
            call.result = ToolResult(text=report, kind="subagent")
            if call.status == "unknown":
                call.status = "success"
                call.ended_at = call.ended_at or stamp

    def notification(self, text: str, stamp: str | None, node: _Node) -> None:
        """A ``<task-notification>``: a background task (an agent run with
        ``run_in_background``, a background command) finished. Its call gets the outcome; the
        notification is no prompt and starts no turn. One that names no call is a notice."""
        fields = _notification_fields(text)
        call = self.notified_call(fields)
        if call is None:
            node.entries.append(_notification_notice(text, fields, stamp))
        elif call.call_id not in self.notified:
            self.notified.add(call.call_id)
            _settle_background(call, fields, stamp)

    def queue_operation(self, record: dict[str, Any], line: int) -> None:
        """The prompt queue's bookkeeping, which older builds made the only record of two
        things. A background task's notification queued for the model: Claude Code 2.0
        writes an agent's ``<agent-notification>`` there alone, so it is kept, to settle its
        call at the end if no notification delivered later (2.1 writes one, the same text)
        does. A prompt typed while the agent worked and taken mid-turn (an ``enqueue`` of its
        text, then a ``remove`` without content): Claude Code 2.1.5x writes no
        ``queued_command`` attachment for it, so the ``remove`` shows it where the agent read
        it (:meth:`absorbed_prompt`)."""
        operation, content = record.get("operation"), record.get("content")
        if operation == "enqueue" and isinstance(content, str):
            if content.lstrip().startswith(("<agent-notification>", "<task-notification>")):
                self.source.mapped("queue-operation/notification")
                stamp = self.timestamp(record, line)
                self.queued_notices.append((_notification_fields(content), stamp))
                return
            if _typed_prompt(content):
                self.source.mapped("queue-operation/prompt")
                self.typed.append((content.strip(), self.timestamp(record, line)))
                return
        elif operation == "remove" and "content" not in record and self.typed:
            self.absorbed_prompt(line, *self.typed.pop(0))
        elif operation == "dequeue" and self.typed:
            self.typed.pop(0)  # it becomes the next prompt, a user line of its own
        elif operation == "popAll":
            self.typed.clear()  # back in the input box, to be edited
        self.source.ignored("queue-operation")

    def absorbed_prompt(self, line: int, text: str, stamp: str | None) -> None:
        """A typed prompt the agent took mid-turn, shown here unless an attachment or a user
        line later shows it (:meth:`shown_prompt`): a build that writes those says it once."""
        message = UserMessage(text=text, timestamp=stamp, meta={"queued": True})
        node = _Node(line, None, None)
        node.entries.append(message)
        self.main.nodes.append(node)
        self.absorbed[text] = node

    def shown_prompt(self, text: str) -> None:
        """A prompt a user line or attachment shows: not shown again from the queue."""
        node = self.absorbed.pop(text.strip(), None) if self.absorbed else None
        if node is not None:
            node.entries.clear()

    def settle_from_queue(self) -> None:
        """Background calls that only a queued notification settles (Claude Code 2.0)."""
        for fields, stamp in self.queued_notices:
            call = self.notified_call(fields)
            if call is not None and call.call_id not in self.notified:
                self.notified.add(call.call_id)
                _settle_background(call, fields, stamp)

    def notified_call(self, fields: dict[str, str]) -> ToolCall | None:
        """The call a notification names: by ``<tool-use-id>``, else its task's or agent's id."""
        return (
            self.calls.get(fields["tool-use-id"])
            or self.background.get(fields["task-id"])
            or self.background.get(fields["agent-id"])
        )

    def interrupt(self, thread: _Thread, marker: Entry, node: _Node) -> None:
        """``[Request interrupted by user…]`` (its ``marker``): the turn stopped; its
        unfinished calls too."""
        node.entries.append(marker)
        for call in thread.open_calls:
            if call.result is None and call.status == "unknown":
                call.status, call.ended_at = "cancelled", marker.timestamp
        thread.open_calls.clear()

    def compact_summary(self, thread: _Thread, text: str, stamp: str | None, node: _Node) -> None:
        """An ``isCompactSummary`` line: the summary of the boundary just before it."""
        boundary = thread.boundary
        if boundary is not None and boundary.summary is None:
            boundary.summary = text
        else:
            # Older files have no compact_boundary: the summary line alone marks the compaction.
            node.entries.append(CompactionBoundary(summary=text, timestamp=stamp))
        thread.boundary = None

    def shell_input(
        self, text: str, record: dict[str, Any], stamp: str | None, thread: _Thread, node: _Node
    ) -> None:
        """A command the user ran with ``!``: a user-initiated Bash call (spec F-14)."""
        command = (_tag(text, "bash-input") or "").strip()
        args = {"command": command}
        call = ToolCall(
            call_id=_str(record.get("uuid")) or "",
            name="Bash",
            args=args,
            description=describe_args("Bash", args, self.cwd),
            status="unknown",
            started_at=stamp,
            timestamp=stamp,
            user_initiated=True,
        )
        node.entries.append(call)
        thread.shell = call

    def shell_output(self, text: str, stamp: str | None, thread: _Thread) -> None:
        call, thread.shell = thread.shell, None
        if call is None:
            return
        output = "\n".join(
            part.strip("\n") for part in (_tag(text, "bash-stdout"), _tag(text, "bash-stderr"))
            if part and part.strip()
        )  # fmt: skip
        call.result, call.ended_at = text_result(output or None), stamp

    # --- tool results -------------------------------------------------------------------------

    def settle(
        self,
        block: dict[str, Any],
        record: dict[str, Any],
        extra: Any,
        stamp: str | None,
        line: int,
    ) -> None:
        """Pair a ``tool_result`` with its call and record the outcome."""
        call_id = _str(block.get("tool_use_id")) or _str(record.get("sourceToolUseID"))
        call = self.calls.get(call_id) if call_id else None
        if call is None and call_id:
            # Claude Code 2.1.1xx can write a result's line before the line of its call (the
            # result's parentUuid points ahead, to the call's line): it waits for its call, and
            # is warned of at the end only if none comes.
            self.early_results.setdefault(call_id, []).append(
                _EarlyResult(block, record, extra, stamp, line)
            )
            return
        if call is None:
            self.source.warn(f"tool result for an unknown tool_use_id {call_id!r}; skipped", line)
            return
        call.status, call.result = tool_outcome(call, *blocks.result_of(block), record, extra,
                                                self.cwd)  # fmt: skip
        call.ended_at = stamp
        if isinstance(extra, dict):
            if (duration := recorded_duration(extra)) is not None:
                call.duration_ms = duration
            spawn = self.spawn_of.get(call.call_id)
            if spawn is not None:
                _record_stats(spawn, extra, line)
            task_id = _str(extra.get("backgroundTaskId"))
            if launched_async(extra):
                # Launched in the background: the call runs until its task notification.
                call.status, call.ended_at, call.duration_ms = "unknown", None, None
                call.meta["background"] = True
                task_id = _str(extra.get("agentId")) or task_id
                if (model := _str(extra.get("resolvedModel"))) is not None:
                    self.agent_models[call.call_id] = model
            if task_id:
                self.background.setdefault(task_id, call)
            if call.name in workflows.WORKFLOW_TOOL_NAMES:
                self.workflow_launched(call, extra, line)

    def workflow_launched(self, call: ToolCall, extra: dict[str, Any], line: int) -> None:
        """A Workflow call's run: its agents are nested under it at the end; its task
        notification (``<task-id>`` = ``taskId``) settles it."""
        launch = workflows.launched(call, extra, line)
        if launch is not None:
            self.workflow_launches.append(launch)
        task_id = _str(extra.get("taskId"))
        if task_id:
            self.background.setdefault(task_id, call)

    # --- assistant lines ----------------------------------------------------------------------

    def assistant(self, record: dict[str, Any], line: int, thread: _Thread, node: _Node) -> None:
        self.source.note("assistant", "mapped")
        stamp = self.timestamp(record, line)
        message = record["message"]
        content = message.get("content")
        parts = content if isinstance(content, list) else [content]
        model = _str(message.get("model"))
        if record.get("isApiErrorMessage") is True or (
            model == "<synthetic>" and record.get("error")
        ):
            text = _plain_text(content) or stringify(record.get("error"))
            node.entries.append(AssistantError(message=text, timestamp=stamp))
            return
        model = None if model == "<synthetic>" else model
        if model:
            self.metadata["model"] = model
        batch_id = _str(message.get("id")) or node.uuid or f"line-{line}"
        response = self.responses.get(batch_id)
        if response is None:
            response = self.responses[batch_id] = _Response()
        response.model = model or response.model
        for part in parts:
            entry = self.assistant_entry(part, batch_id, model, stamp, line, thread)
            if entry is not None:
                entry.timestamp = stamp
                node.entries.append(entry)
                response.first = response.first or entry
                if isinstance(entry, AssistantText):
                    response.text = thread.last_text = entry
        if "usage" in message:
            response.usage = message["usage"]  # the last line of a response has the final counts

    def assistant_entry(
        self,
        part: Any,
        batch_id: str,
        model: str | None,
        stamp: str | None,
        line: int,
        thread: _Thread,
    ) -> Entry | None:
        if isinstance(part, str):
            return AssistantText(text=part, model=model) if part else None
        if not isinstance(part, dict):
            return None
        kind = part.get("type")
        if kind == "text":
            text = part.get("text")
            if isinstance(text, str) and text.strip():  # whitespace alone is no entry
                return AssistantText(text=text, model=model)
            return None
        if kind in ("thinking", "redacted_thinking"):
            return blocks.thinking_of(part)
        if kind == "tool_use" or blocks.is_call_type(kind):  # the common one asked first
            return self.start_call(part, batch_id, stamp, line, thread)
        if kind == "fallback":
            return _fallback_notice(part)
        if blocks.is_result_type(kind):  # a server tool's result, in the same response
            self.settle(part, {}, None, stamp, line)
            return None
        self.unknown_block(kind, line)
        return None

    def unknown_block(self, kind: Any, line: int) -> None:
        if str(kind) not in self.unknown_blocks:
            self.unknown_blocks.add(str(kind))
            self.source.warn(f"unknown content block type {kind!r} skipped", line)

    def start_call(
        self, part: dict[str, Any], batch_id: str, stamp: str | None, line: int, thread: _Thread
    ) -> ToolCall | None:
        call = blocks.call_of(part, cwd=self.cwd, batch_id=batch_id, status="unknown")
        if call.call_id in self.calls:
            return None  # the same block written again (a resumed or duplicated line)
        if call.call_id:
            self.calls[call.call_id] = call
        else:
            self.source.warn(f"{part.get('type')} block without an id", line)
        call.started_at = stamp
        thread.open_calls.append(call)
        if call.name in _AGENT_TOOL_NAMES:  # a str: the NameSet's own test is not needed
            self.add_spawn(call, line)
        for early in self.early_results.pop(call.call_id, []):
            self.settle(early.block, early.record, early.extra, early.stamp, early.line)
        return call

    def add_spawn(self, call: ToolCall, line: int) -> None:
        args = call.args if isinstance(call.args, dict) else {}
        call.subagent = SubAgent(
            name=_str(args.get("subagent_type")), task=_str(args.get("description"))
        )
        prompt = args.get("prompt")
        spawn = _Spawn(call, line, prompt.strip() if isinstance(prompt, str) else None)
        self.spawns.append(spawn)
        if call.call_id:
            self.spawn_of[call.call_id] = spawn

    # --- system lines -------------------------------------------------------------------------

    def system(self, record: dict[str, Any], line: int, thread: _Thread, node: _Node) -> None:
        stamp = self.timestamp(record, line)
        subtype = _str(record.get("subtype"))
        if subtype in _SYSTEM_IGNORED:
            self.source.ignored(f"system/{subtype}")
            return
        self.source.mapped(f"system/{subtype}" if subtype in _SYSTEM_MAPPED else "system")
        node.logical_parent = _str(record.get("logicalParentUuid"))
        entry: Entry | None
        if subtype == "compact_boundary":
            entry = thread.boundary = _boundary(record)
            thread.open_calls.clear()
        elif subtype in ("api_error", "error"):
            entry = _api_error(record)
        elif subtype == "api_refusal":
            entry = _refusal(record)
        elif subtype == "stop_hook_summary":
            entry = _hook_errors(record)
        elif subtype == "turn_duration":
            entry = None
            self.turn_duration(record, thread)
        else:
            entry = _notice(record, subtype)
        if entry is not None:
            entry.timestamp = stamp
            node.entries.append(entry)

    def turn_duration(self, record: dict[str, Any], thread: _Thread) -> None:
        """The turn's recorded duration beats the span of its timestamps (L-3, issue 21.10)."""
        duration = record.get("durationMs")
        target: Entry | None = thread.last_text or thread.last_prompt
        if isinstance(duration, bool) or not isinstance(duration, (int, float)):
            return
        if duration > 0 and target is not None:
            target.meta["turn_duration_ms"] = float(duration)

    # --- progress and attachment lines --------------------------------------------------------

    def progress(self, record: dict[str, Any], line: int, thread: _Thread, node: _Node) -> None:
        data = record.get("data")
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "agent_progress" and isinstance(data, dict):
            self.source.mapped("progress/agent_progress")
            self.agent_step(record, data, line)
        elif kind in _IGNORED_PROGRESS:
            self.source.ignored(f"progress/{kind}")
        elif kind is None:
            self.source.ignored("progress")
        else:
            self.unknown(f"progress/{kind}", line)

    def agent_step(self, record: dict[str, Any], data: dict[str, Any], line: int) -> None:
        """One step of a running sub-agent, kept under the call that spawned it."""
        call_id = _str(record.get("parentToolUseID"))
        if call_id is None:
            self.source.warn("agent progress without a parentToolUseID; skipped", line)
            return
        steps = self.steps.setdefault(call_id, _Steps())
        if steps.agent_id is None and (agent_id := _str(data.get("agentId"))) is not None:
            steps.agent_id, steps.agent_id_line = agent_id, line
        step = _step_record(data.get("message"), record)
        if step is None:
            return  # a progress record with no message yet (only the prompt and agent id)
        uuid = _str(step.get("uuid"))
        if uuid is not None:
            if uuid in steps.seen:
                return  # the same step written again
            steps.seen.add(uuid)
        steps.records.append((line, step))

    def attachment(self, record: dict[str, Any], line: int, thread: _Thread, node: _Node) -> None:
        attachment = record.get("attachment")
        kind = attachment.get("type") if isinstance(attachment, dict) else None
        if kind == "queued_command" and isinstance(attachment, dict):
            self.source.mapped("attachment/queued_command")
            self.queued(attachment, record, line, node)
        elif kind == "hook_system_message" and isinstance(attachment, dict):
            self.source.mapped("attachment/hook_system_message")
            text = _str(attachment.get("content")) or _str(attachment.get("message"))
            if text and text.strip():
                stamp = self.timestamp(record, line)
                node.entries.append(
                    SystemNotice(text=text.strip(), subtype="hook_system_message", timestamp=stamp)
                )
        elif kind in _IGNORED_ATTACHMENTS:
            self.source.ignored(f"attachment/{kind}")
        elif kind is None:
            self.source.ignored("attachment")
        else:
            self.unknown(f"attachment/{kind}", line)

    def queued(
        self, attachment: dict[str, Any], record: dict[str, Any], line: int, node: _Node
    ) -> None:
        """A prompt queued while the agent worked, shown where the agent read it (issue 21.3).

        Typed by the user (``origin.kind: human``, or no origin in older builds): the user's
        message. A task notification: the outcome of its call. From another agent: a notice.
        """
        # Its own time (when it was queued), else its line's. One that is no time is said at
        # the end (summarise_warnings), one notice for a file of them: with the lines' own
        # when its line has no time either, the prompt then shown without one.
        own = attachment.get("timestamp")
        stamp = checked_timestamp(own)
        if stamp is None:
            stamp = self.timestamp(record, line)
            if own is not None and stamp is None:
                self.bad_time(line)
            elif own is not None:
                self.bad_queued_times.append(line)
        text, images = _prompt_content(attachment.get("prompt"))
        origin = attachment.get("origin")
        origin_kind = origin.get("kind") if isinstance(origin, dict) else None
        mode = attachment.get("commandMode")
        if self.handed_back(origin, stamp, node):
            return
        if (
            origin_kind == "task-notification"
            or mode == "task-notification"
            or text.lstrip().startswith("<task-notification>")
        ):
            self.notification(text, stamp, node)
        elif origin_kind in (None, "human"):
            if text or images:
                self.shown_prompt(text)
                node.entries.append(
                    UserMessage(text=text, images=images, timestamp=stamp, meta={"queued": True})
                )
        elif text.strip():
            sender = _str(origin.get("from")) if isinstance(origin, dict) else None
            key = "reader.message_from" if sender else "reader.message_of_kind"
            params = {"sender": sender, "kind": origin_kind, "said": text.strip()}
            node.entries.append(notice(key, params, subtype="queued_command", timestamp=stamp))

    # --- assembling the transcript ------------------------------------------------------------

    def assemble_transcript(self) -> Transcript:
        for call_id, early in self.early_results.items():
            for result in early:
                self.source.warn(
                    f"tool result for an unknown tool_use_id {call_id!r}; skipped",
                    result.line,
                    record=result.record,
                )
        self.early_results = {}
        for message_id, response in self.responses.items():
            carrier = response.text or response.first
            usage = blocks.usage_of(response.usage) if response.usage is not None else None
            if usage is not None and isinstance(carrier, USAGE_KINDS):
                usage.response_id = message_id
                carrier.usage = usage  # a response of calls only has usage too (U-1)
            if response.text is None and response.first is not None and response.model:
                response.first.meta["model"] = response.model  # model switches stay visible
        self.settle_from_queue()
        self.settle_handbacks()
        self.link_sidechains()
        self.warn_dangling()
        entries = list(self.assemble(self.main.nodes))
        for spawn in self.spawns:
            self.attach_subagent(spawn)
        self.attach_workflows(entries)
        self.attach_unclaimed_files(entries)
        if self.owns_steps:
            self.attach_stray_steps()
        self.finish_metadata()
        self.summarise_warnings()
        transcript = Transcript(entries, metadata=self.metadata)
        uncounted_subagent_usage(transcript, self.agent_models)
        return transcript

    def link_sidechains(self) -> None:
        """Nest each inline sidechain under its Task call; unmatched ones stay in the main flow."""
        by_agent = {s.agent_id: s for s in self.spawns if s.agent_id}
        by_prompt: dict[str, list[_Spawn]] = {}
        for each in self.spawns:
            if each.prompt:
                by_prompt.setdefault(each.prompt, []).append(each)
        unlinked: list[_Thread] = []
        for thread in self.sidechains:
            spawn: _Spawn | None = by_agent.get(thread.agent_id) if thread.agent_id else None
            if spawn is None or spawn.thread is not None:
                candidates = by_prompt.get((thread.prompt or "").strip(), [])
                spawn = next(
                    (s for s in candidates if s.thread is None and s.line < thread.root_line), None
                )
            if spawn is not None:
                spawn.thread = thread
            else:
                unlinked.append(thread)
        if unlinked and any(n.conversational for n in self.main.nodes):
            for thread in unlinked:
                self.source.warn("sidechain matches no Task call; shown inline", thread.root_line)
        if unlinked:
            lists = [self.main.nodes] + [t.nodes for t in unlinked]
            self.main.nodes = list(heapq.merge(*lists, key=lambda n: n.line))

    def warn_dangling(self) -> None:
        threads = [self.main, *self.sidechains]
        seeds: _SeedMessages | None = None  # read only for a file with a parent missing
        for thread in threads:
            for node in thread.nodes:
                if node.parent is None or node.parent in self.thread_of:
                    continue
                if seeds is None:
                    seeds = _SeedMessages(self.source.path, self.unlisted("fork seeds (*.json)"))
                seed = seeds.holding(node.parent)
                if seed is None:
                    self.source.warn(_dangling(node.parent), node.line)
                    continue
                # A fork's own file: its process took the seed's messages up without writing
                # them here, so the link is no loss; the warning says where they are.
                path, forked_from = seed
                self.metadata.setdefault("forked_from_id", forked_from)
                self.source.warn(_continues_seed(node.parent, path), node.line)

    def assemble(self, nodes: list[_Node]) -> Iterator[Entry]:
        dropped = _abandoned(nodes)
        if dropped:
            self.metadata["skipped_branches"] = self.metadata.get("skipped_branches", 0) + len(
                {nodes[i].line for i in dropped if nodes[i].prompt}
            )
        for index, node in enumerate(nodes):
            if index not in dropped:
                yield from node.entries

    def attach_subagent(self, spawn: _Spawn) -> None:
        agent = spawn.call.subagent
        if agent is None:
            return
        steps = self.steps.pop(spawn.call.call_id, None) if spawn.call.call_id else None
        if spawn.agent_id is None and steps is not None:
            spawn.agent_id = agent.agent_id = steps.agent_id
            spawn.agent_id_line = steps.agent_id_line
        if spawn.thread is not None:
            agent.transcript = Transcript(metadata={"source_format": NAME})
            for entry in self.assemble(spawn.thread.nodes):
                agent.transcript.append(entry)
        else:
            # The sub-agent's own file wins over the steps the parent recorded: never both.
            agent.transcript = self.child_file(spawn)
            if agent.transcript is None and steps is not None:
                agent.transcript = self.child_of_steps(spawn, steps)
                _with_last_response(agent.transcript, spawn.last_usage)
        child = agent.transcript
        if child is not None:
            recorded = child.metadata.get("usage")
            spent = recorded if isinstance(recorded, dict) else count_tokens(child.entries)
            agent.output_tokens = spent.get("output_tokens")
        ran = bool(agent.tool_count) or spawn.call.status == "success"
        # Steps left unread past the nesting bound are recorded, not missing: a warning says so.
        cut = spawn.call.call_id in self.past_bound
        agent.steps_missing = child is None and ran and not cut
        if child is not None and spawn.call.status == "cancelled":
            # Stopping the Task stopped its agent, and the calls that agent had running.
            for call in child.tool_calls():
                if call.status == "unknown" and call.result is None:
                    child.update(call, status="cancelled")
        if spawn.call.status in ("error", "cancelled") and spawn.call.result is not None:
            agent.reason = agent.reason or _first_line(spawn.call.result.text)

    def attach_workflows(self, entries: list[Entry]) -> None:
        """Each Workflow call's agents under it; the session file's own reader also shows the
        runs no call named (:mod:`.claude_code_workflows`)."""
        runs = self.context.workflow_runs
        # Capped as the source's own: a run's journal may hold any number of bad lines (X-1).
        warn = functools.partial(keep_warning, self.source.warnings)
        for launch in self.workflow_launches:
            workflows.attach(launch, runs, self.read_child_file, warn, self.source.name)
        path = self.source.path
        if path is not None and runs.session_dir == path.parent / path.stem:
            entries += workflows.unclaimed(runs, self.read_child_file, warn, self.source.name)

    def child_of_steps(self, spawn: _Spawn, steps: _Steps) -> Transcript | None:
        """A sub-agent's transcript from its ``agent_progress`` steps (Claude Code 2.1), read
        by this same loader; the steps were accounted for as the parent's records."""
        if not steps.records:
            return None
        if self.depth >= MAX_DEPTH:
            self.steps_too_deep(spawn, steps)
            return None
        source = Source(self.source.name, iter(steps.records))
        try:
            reader = _Reader(source, self.context, self.steps, self.depth + 1, self.session)
            child = read_through(reader)
        except TranscriptFormatError as exc:
            self.source.warn(f"sub-agent steps: {exc.reason}", spawn.line)
            return None
        join_warnings(child.warnings, source.warnings, before=True)
        child.metadata["agent_id"] = spawn.agent_id
        return child

    def steps_too_deep(self, spawn: _Spawn, steps: _Steps) -> None:
        """The steps of a sub-agent one level deeper than sub-agents nest, left unread: its
        call keeps its line and result, and a warning names the lines of its steps and of the
        steps of the sub-agents under it, taken out of the shared steps so that no reader
        says they belong to no call. Each level is read by a reader of its own, by recursion
        (some five frames a level): the bound keeps a file thousands of levels deep in the
        stack."""
        call_id = spawn.call.call_id
        self.past_bound.add(call_id)
        lines: list[int] = []
        agents, todo = 0, [steps]
        while todo:  # a stack, not recursion: the sub-agents under it may nest thousands deep
            current = todo.pop()
            agents += 1
            for line, record in current.records:
                lines.append(line)
                for inner in _call_ids(record):
                    deeper = self.steps.pop(inner, None)
                    if deeper is not None:
                        todo.append(deeper)
        lines.sort()
        named = spawn.agent_id or steps.agent_id
        what = f"sub-agent {named or '(no id)'!r} of call {call_id}"
        under = {1: "", 2: " and the sub-agent under it"}.get(
            agents, f" and the {agents - 1:,} sub-agents under it"
        )
        if len(lines) == 1:
            instead = f"its step record (line {lines[0]}) is not read"
        else:
            span = f"lines {lines[0]}-{lines[-1]}"
            instead = f"the {len(lines):,} step records of it{under} ({span}) are not read"
        self.warn_session(too_deep(what, self.depth + 1, instead), lines[0])

    def unlisted(self, unread: str) -> NotListed:
        """What :func:`~turnfold.formats.source.sibling_files` tells of a folder of the session
        it could not list: said among the session's warnings, once a folder, naming it and
        what in it (``unread``) is not read; the rest of the session loads whole."""

        def say(folder: Path, error: OSError) -> None:
            self.warn_session(folder_not_listed(folder, error, unread), None)

        return once_a_folder(say, self.context.unlisted_folders)

    def warn_session(self, reason: str, line: int | None) -> None:
        """A warning about this reader's file (``line`` one of its lines) among the session's,
        where the view shows it."""
        if self.session is self.source:
            self.source.warn(reason, line)
        else:
            warning = LoadWarning(reason=reason, line=line, source=self.source.name)
            keep_warning(self.session.warnings, warning)

    def attach_stray_steps(self) -> None:
        """Steps under a call that is no Task/Agent call still nest under it; steps under a
        call the file does not hold are said to be lost."""
        for call_id, steps in list(self.steps.items()):
            call = self.calls.get(call_id)
            if call is None or not steps.records:
                if steps.records:
                    self.source.warn(
                        f"{len(steps.records)} sub-agent step(s) of call {call_id!r}, which is "
                        "not in the file; not shown",
                        steps.records[0][0],
                    )
                continue
            del self.steps[call_id]
            spawn = _Spawn(call, steps.records[0][0], None, steps.agent_id, steps.agent_id_line)
            call.subagent = call.subagent or SubAgent(agent_id=steps.agent_id)
            call.subagent.transcript = self.child_of_steps(spawn, steps)

    def child_file(self, spawn: _Spawn) -> Transcript | None:
        """The sub-agent's own file (v2.0 beside the session, v2.1 in ``<session>/subagents``)."""
        path = None
        if spawn.agent_id and not _safe_name(spawn.agent_id):
            self.refuse_agent_id(spawn.agent_id, spawn.agent_id_line or spawn.line)
        elif spawn.agent_id:
            unlisted = self.unlisted(_AGENT_FILES)
            path = next(
                (
                    p
                    for d in self.context.dirs
                    if found_file(p := d / f"agent-{spawn.agent_id}.jsonl", unlisted)
                ),
                None,
            )
        if path is None and spawn.call.call_id and self.context.dirs:
            links = self.context.meta_links(self.unlisted(_AGENT_FILES))
            path = links.get(spawn.call.call_id)
        if path is None or path in self.context.loading:
            return None
        self.claimed_files.add(path)
        self.fill_from_meta(spawn, path.with_name(path.name.removesuffix(".jsonl") + ".meta.json"))
        child = self.read_child_file(path, spawn.line)
        if child is None and self.depth >= MAX_DEPTH:
            self.past_bound.add(spawn.call.call_id)  # its file holds its steps, said so
        if child is not None and spawn.agent_id:
            child.metadata["agent_id"] = spawn.agent_id
        return child

    def refuse_agent_id(self, agent_id: str, line: int) -> None:
        """Say, once per value, that ``agent_id`` names no file to look for: only a plain name
        may become part of a path (spec X-1), and this one, read from the file, could name one
        outside the session's folders (``..``, an absolute path). The call keeps its place; its
        file may still be found by its call id (``toolUseId`` of a ``.meta.json``)."""
        if agent_id in self.refused_agent_ids:
            return
        self.refused_agent_ids.add(agent_id)
        self.warn_session(
            f"agentId {agent_id!r} is not a plain name: its sub-agent's file, in the folder it "
            "would name beside this session's, is not looked for",
            line,
        )

    def attach_unclaimed_files(self, entries: list[Entry]) -> None:
        """The sub-agent files of the session that no call of it names: those in
        ``<session>/subagents``, and (Claude Code 2.0) those beside the session whose records
        name it in ``sessionId`` (:func:`_agent_files_of`). A warmup run (:func:`_is_warmup`)
        is Claude Code's own request, no agent's work: its tokens are the session's side
        requests and one notice names them (:meth:`account_warmups`). Any other is shown at
        the end under a call of its own and said in a warning (its call lost with the end of
        a cut file, say), as an unclaimed Workflow run is
        (:func:`.claude_code_workflows.unclaimed`). Only the session file's own reader looks."""
        path = self.source.path
        if path is None or self.context.loading != frozenset({path}):
            return
        folder = path.parent / path.stem / "subagents"
        unlisted = self.unlisted(_AGENT_FILES)
        files = sibling_files(folder, "agent-*.jsonl", unlisted)
        sessions = {path.stem, self.metadata.get("session_id")}
        files += _agent_files_of(path.parent, {s for s in sessions if isinstance(s, str)},
                                 unlisted)  # fmt: skip
        boundaries = [e for e in entries if isinstance(e, CompactionBoundary)]
        warmups: list[tuple[Path, Transcript]] = []
        for file in files:
            if file in self.claimed_files:
                continue
            if file.name.startswith(_COMPACTION_AGENT):
                self.compaction_agent(file, entries, boundaries)
                continue
            if not _opens_a_sidechain(file):
                self.source.warn(
                    f"sub-agent file {file.name} names no call of the session and holds no "
                    "sub-agent's records; not read"
                )
                continue
            child = self.read_child_file(file, None)
            if child is not None and _is_warmup(child):
                warmups.append((file, child))
                continue
            agent_id = file.name.removeprefix("agent-").removesuffix(".jsonl")
            meta = json_object_file(file.with_name(f"agent-{agent_id}.meta.json"))
            self.source.warn(
                f"sub-agent file {file.name} names no call of the session; its agent is shown "
                "at the end"
            )
            task = _str(meta.get("description"))
            call = ToolCall(
                call_id=_str(meta.get("toolUseId")) or f"agent:{agent_id}",
                name="Agent",
                args={"description": task} if task else {},
                status="unknown",
                meta={"synthetic": "unclaimed sub-agent file"},
            )
            call.subagent = SubAgent(name=_str(meta.get("agentType")), task=task,
                                     agent_id=agent_id)  # fmt: skip
            call.subagent.transcript = child
            entries.append(call)
        self.account_warmups(warmups, entries)

    def account_warmups(self, warmups: list[tuple[Path, Transcript]], entries: list[Entry]) -> None:
        """Claude Code's warmup runs (:func:`_is_warmup`): requests it makes of its own to
        fill the prompt cache, which no call of the session asked for. Their tokens are the
        session's (U-1), in its total as side requests by model (as ``cost-state``'s are,
        :func:`uncounted_subagent_usage`), neither a turn's nor a sub-agent's: a warmup is no
        agent's work, so it is no call either, which would count as a tool call and a
        sub-agent. One notice names them, their files and tokens, at the time of the first."""
        if not warmups:
            return
        side: dict[str, Tokens] = {}
        spent: Tokens = {}
        starts: list[tuple[float, str]] = []
        for _, child in warmups:
            join_warnings(self.source.warnings, child.warnings)
            for model, counts in count_tokens_by(child.entries, _response_model).items():
                add_into(side.setdefault(model or "", {}), counts)
                add_into(spent, counts)
            starts += [(moment, e.timestamp) for e in child.entries[:1]
                       if e.timestamp and (moment := _epoch(e.timestamp)) is not None]  # fmt: skip
        if any(spent.values()):
            self.metadata["side_request_usage"] = side
        names = [file.name for file, _ in warmups]
        total = spent.get("input_tokens", 0) + spent.get("output_tokens", 0)
        one = len(warmups) == 1
        key = "reader.warmup_requests.one" if one else "reader.warmup_requests.other"
        params = {"count": len(warmups), "files": ", ".join(names),
                  "tokens": format_token_count(total)}  # fmt: skip
        first = min(starts)[1] if starts else None
        said = notice(key, params, subtype="warmup", timestamp=first,
                      meta={"warmup_files": names, "warmup_usage": spent})  # fmt: skip
        at = len(entries)
        if first is not None:
            moment = min(starts)[0]
            at = next((i for i, e in enumerate(entries)
                       if e.timestamp and (_epoch(e.timestamp) or 0) > moment), at)  # fmt: skip
        entries.insert(at, said)

    def compaction_agent(
        self, file: Path, entries: list[Entry], boundaries: list[CompactionBoundary]
    ) -> None:
        """``agent-acompact-<id>.jsonl`` (Claude Code 2.1.3x on): the conversation that wrote a
        compaction's summary, no call's. It is shown under a call of its own at the boundary it
        wrote (the first not yet taken at or after its last record): just before it, or after
        the ``/compact`` prompt that asked for it, which Claude Code writes after the boundary.
        One that matches no boundary is shown at the end, with a warning."""
        child = self.read_child_file(file, None)
        if child is None:
            return
        # Its first records are copies whose parents are the session's: no dangling links.
        links = {_dangling(uuid) for uuid in self.thread_of}
        child.warnings[:] = [w for w in child.warnings if w.reason not in links]
        agent_id = file.name.removeprefix("agent-").removesuffix(".jsonl")
        # Its task is the prompt it was given (the summary instructions), as any agent's line
        # names its task; its run is dated by its records.
        prompt = next((e for e in child.entries if isinstance(e, UserMessage) and e.text), None)
        agent = SubAgent(
            name="compact",
            agent_id=agent_id,
            transcript=child,
            task=prompt.text if prompt is not None else None,
            output_tokens=count_tokens(child.entries).get("output_tokens"),
        )
        call = ToolCall(
            call_id=f"agent:{agent_id}",
            name="Agent",
            status="unknown",
            meta={"synthetic": "compaction agent file"},
            subagent=agent,
        )
        dated = sorted(
            (moment, e.timestamp)
            for e in child.entries
            if e.timestamp is not None and (moment := _epoch(e.timestamp)) is not None
        )
        if dated:
            call.timestamp = call.started_at = dated[0][1]
            call.ended_at = dated[-1][1]
            agent.duration_ms = span_ms(dated[0][1], dated[-1][1])
        times = [moment for moment, _ in dated]
        boundary = next(
            (b for b in boundaries if times and (_epoch(b.timestamp) or 0) >= max(times)), None
        )
        if boundary is None:
            self.source.warn(
                f"compaction agent file {file.name} matches no compaction boundary; its agent "
                "is shown at the end"
            )
            entries.append(call)
            return
        boundaries.remove(boundary)
        call.status = "success"  # the boundary holds what it wrote
        at = next(i for i, e in enumerate(entries) if e is boundary)
        if boundary.trigger == "manual":
            at = next((i + 1 for i in range(at, len(entries))
                       if isinstance(entries[i], UserMessage)), at)  # fmt: skip
        entries.insert(at, call)

    def read_child_file(self, path: Path, line: int | None) -> Transcript | None:
        """A sub-agent's file read by this same loader; None when it holds nothing readable
        (said with a warning on ``line``, the call's)."""
        if path in self.context.loading:
            return None
        if self.depth >= MAX_DEPTH:  # the same bound as steps recorded in the parent's file
            what, instead = f"sub-agent file {path.name}", "it loads as a file of its own"
            self.warn_session(too_deep(what, self.depth + 1, instead), line)
            return None
        try:
            source, stream = open_source(path)
        except OSError as exc:
            self.source.warn(f"sub-agent file {path.name} unreadable: {exc}", line)
            return None
        context = replace(self.context, loading=self.context.loading | {path})
        try:
            reader = _Reader(source, context, depth=self.depth + 1, session=self.session)
            child = read_through(reader) if source.head else None
        except TranscriptFormatError as exc:
            self.source.warn(f"sub-agent file {path.name}: {exc.reason}", line)
            child = None
        finally:
            if stream is not None:
                stream.close()
        self.source.accounting.merge(source.accounting)  # nothing of the child file unaccounted
        if child is not None:
            join_warnings(child.warnings, source.warnings, before=True)
        return child

    def fill_from_meta(self, spawn: _Spawn, meta_path: Path) -> None:
        agent = spawn.call.subagent
        if agent is None:
            return
        meta = json_object_file(meta_path)
        agent.name = agent.name or _str(meta.get("agentType"))
        agent.task = agent.task or _str(meta.get("description"))

    def finish_metadata(self) -> None:
        if self.requested_model and "model" not in self.metadata:
            self.metadata["model"] = self.requested_model
        summary = self.own_summary()
        if summary is not None:
            self.titles["summary"] = summary
        for kind in ("custom-title", "ai-title", "summary"):
            if kind in self.titles:
                self.metadata["title"] = self.titles[kind]
                break

    def own_summary(self) -> str | None:
        """The last summary of this session: one whose ``leafUuid`` is a message of this file.
        Claude Code also writes, at the top of a new session's file, the summaries of the
        sessions before it (for ``/resume``), whose leaves are in their own files: those are
        kept as ``other_summaries``, never this session's title. A file of summaries alone
        (no message of its own) is titled by its last."""
        own = [text for text, leaf in self.summaries if leaf is None or leaf in self.thread_of]
        others = [{"summary": text, "leafUuid": leaf} for text, leaf in self.summaries
                  if leaf is not None and leaf not in self.thread_of]  # fmt: skip
        if others and self.thread_of:
            self.metadata["other_summaries"] = others
            return own[-1] if own else None
        return self.summaries[-1][0] if self.summaries else None

    def summarise_warnings(self) -> None:
        if self.bad_times:
            count, first = len(self.bad_times), self.bad_times[0]
            self.source.warn(
                f"{count} line(s) have no readable timestamp; shown without a time", first
            )
        if self.bad_queued_times:
            count, first = len(self.bad_queued_times), self.bad_queued_times[0]
            self.source.warn(
                f"{count} queued command(s) have no readable time of their own; shown at "
                "their line's time",
                first,
            )
        for kind, lines in self.unknown_types.items():
            self.source.warn(
                f"unknown record type {kind!r} skipped ({len(lines)} line(s))", lines[0]
            )


#: What reads each record type that carries content. Plain functions in a table rather than bound
#: methods kept on the reader: those would make every reader a reference cycle, freed only by
#: the cyclic collector with all the entries it read (a twentieth of a large load, issue 19).
_HANDLERS: dict[str, Callable[[_Reader, dict[str, Any], int, _Thread, _Node], None]] = {
    "user": _Reader.user,
    "assistant": _Reader.assistant,
    "system": _Reader.system,
    "progress": _Reader.progress,
    "attachment": _Reader.attachment,
}


# --- small pure helpers -------------------------------------------------------------------------


def _claude_shaped(kind: Any, message: Any) -> bool:
    """A user/assistant line has Anthropic ``content``; no line has Gemini-style ``parts``."""
    if kind == "system":
        return not (isinstance(message, dict) and "parts" in message)
    return isinstance(message, dict) and "content" in message and "parts" not in message


def _plain_text(content: Any) -> str | None:
    """The text of a message's content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(t for t in texts if isinstance(t, str)) or None
    return None


_MESSAGE_TYPES = frozenset({"user", "assistant", "system"})
#: One harness wrapper element: ``<task-notification>…</task-notification>`` and the like. Claude
#: Code's tags are lowercase words joined by hyphens; a user's own HTML (``<div>``) is not.
_WRAPPER = re.compile(r"\s*<([a-z][a-z0-9]*(?:-[a-z0-9]+)+)>(.*?)</\1>\s*", re.DOTALL)
#: Wrappers that only give the model context: a line made of them alone shows nothing.
_SILENT_WRAPPERS = frozenset({"system-reminder", "local-command-caveat"})
#: The file of the agent that writes a compaction's summary (its agent id ``acompact-<hex>``).
_COMPACTION_AGENT = "agent-acompact-"
#: What the sub-agent lookups of a folder look for, as a warning of it not listed names it.
_AGENT_FILES = "sub-agents' files (agent-*.jsonl, agent-*.meta.json)"
_NOTIFICATION_FIELDS = (
    "task-id", "agent-id", "tool-use-id", "status", "summary", "result", "usage",
)  # fmt: skip
#: A task notification's ``<status>`` as the outcome of its call.
_NOTIFIED_STATUS: dict[str, ToolStatus] = {
    "completed": "success", "failed": "error", "killed": "cancelled", "stopped": "cancelled",
}  # fmt: skip


def _wrappers(text: str) -> list[str] | None:
    """The tags of a user text made of nothing but harness wrapper elements, else None.

    The one rule for harness-injected user lines (issue 11.7): a text whose whole content is
    ``<task-notification>``, ``<system-reminder>``, ``<command-…>``, ``<bash-…>``,
    ``<local-command-…>`` or any other hyphenated tag element is a notice, never a prompt.

    >>> _wrappers("<command-name>/x</command-name>\\n<command-args></command-args>")
    ['command-name', 'command-args']
    >>> _wrappers("fix <b>this</b>") is None, _wrappers("<bash-input>ls</bash-input> and more")
    (True, None)
    """
    if not text.lstrip().startswith("<"):
        return None
    tags: list[str] = []
    position = 0
    while position < len(text):
        match = _WRAPPER.match(text, position)
        if match is None:
            return None
        tags.append(match.group(1))
        position = match.end()
    return tags or None


def _dangling(parent: str) -> str:
    """The warning for a record whose ``parentUuid`` is no record of its file."""
    return f"parentUuid {parent!r} is not in the file; read as a root"


def _continues_seed(parent: str, seed: Path) -> str:
    """The warning for a fork's first record, whose ``parentUuid`` is a message of the fork
    seed ``seed`` (:data:`FORK_SEED`)."""
    return (f"parentUuid {parent!r} is not in the file: the session continues the fork seed "
            f"{seed}; its first messages are there")  # fmt: skip


def _epoch(stamp: str | None) -> float | None:
    """An ISO-8601 timestamp as seconds since the epoch (a naive one taken as UTC), or None."""
    if not stamp or checked_timestamp(stamp) is None:
        return None
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))  # Python 3.10 reads no "Z"
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def _opens_a_sidechain(path: Path) -> bool:
    """Whether the file's first record is a sub-agent's: Claude Code writes every record of an
    ``agent-<id>.jsonl`` with ``isSidechain: true`` and its ``agentId``."""
    try:
        with path.open("rb") as stream:
            first = stream.readline(1 << 20)
        record = codec.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and (record.get("isSidechain") is True or "agentId" in record)


def _without_tags(text: str) -> str:
    """A text with its wrapper elements' tags taken out: each element's inner text, and the
    text around them, on lines of their own (a line with no element is its own text)."""
    parts: list[str] = []
    end = 0
    for match in _WRAPPER.finditer(text):
        parts += [text[end : match.start()].strip(), _without_tags(match.group(2))]
        end = match.end()
    parts.append(text[end:].strip())
    return "\n".join(part for part in parts if part)


def _wrapper_notice(text: str, tags: list[str], stamp: str | None) -> SystemNotice | None:
    """A harness wrapper this loader gives no meaning of its own: a notice of its inner text,
    unless it only gives the model context."""
    if all(tag in _SILENT_WRAPPERS for tag in tags):
        return None
    inner = "\n".join(
        m.group(2).strip()
        for m in _WRAPPER.finditer(text)
        if m.group(1) not in _SILENT_WRAPPERS and m.group(2).strip()
    )
    tag = next(t for t in tags if t not in _SILENT_WRAPPERS)
    return SystemNotice(text=inner, subtype=tag, timestamp=stamp) if inner else None


def _notification_notice(text: str, fields: dict[str, str], stamp: str | None) -> SystemNotice:
    """A task notification shown on its own (no call of the session is known to settle): the
    line the CLI shows for it, else its text without the tags."""
    summary = fields["summary"] or _without_tags(text)
    return SystemNotice(text=summary, subtype="task_notification", timestamp=stamp)


#: What the text of a user line is to Claude Code (:class:`UserText`).
UserTextKind = Literal[
    "prompt", "command", "local_output", "interrupt", "task_notification", "shell_input",
    "shell_output", "notice", "context",
]  # fmt: skip


@dataclass
class UserText:
    """The text of a user line as Claude Code's reader reads it (:func:`user_text_entries`).

    ``kind``: the user's ``prompt``; a slash ``command``; a local command's output
    (``local_output``); an ``interrupt``; a ``task_notification``; a command the user ran with
    ``!`` or its output (``shell_input``, ``shell_output``); a harness ``notice``; or
    ``context`` alone. ``shown`` is what the text shows read on its own: for the kinds that
    depend on the session, what a reader without it can show (the interrupt's marker, the
    notification and the ``!`` shell's text as notices); this reader, which keeps the session,
    does more (the interrupt cancels the turn's unfinished calls, the notification settles the
    call it names, the shell's input is a user-initiated call its output settles).
    ``injected`` is the context Claude Code put in the text for the model, verbatim.
    """

    kind: UserTextKind
    shown: list[Entry] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)


def user_text_entries(text: str, timestamp: str | None) -> UserText:
    """The text of one user line (its text blocks joined) read by Claude Code's one rule for
    it, the harness wrappers read by :func:`_wrappers`: what it shows and what is context.

    Stateless, so a reader of Claude Code's requests to its model (an Inspect log of it run
    through the agent bridge) reads each text as this reader reads a line.

    >>> read = user_text_entries(
    ...     "<command-message>review</command-message>\\n<command-name>/review</command-name>\\n"
    ...     "<command-args>a.py</command-args>", None)
    >>> read.kind, read.shown[0].command, read.shown[0].text
    ('command', '/review', 'a.py')
    >>> read = user_text_entries("<system-reminder>\\nctx\\n</system-reminder>\\nFix it", None)
    >>> read.kind, read.shown[0].text, read.injected
    ('prompt', 'Fix it', ['<system-reminder>\\nctx\\n</system-reminder>\\nFix it'])
    """
    if (reason := interruption(text)) is not None:
        return UserText("interrupt", [AbortMarker(reason=reason, timestamp=timestamp)])
    tags = _wrappers(text)
    if not tags:
        injected: list[str] = []
        if "<system-reminder>" in text:  # reminders Claude Code put in the prompt's own text
            injected, text = [text], _without_reminders(text).strip()
        shown: list[Entry] = [UserMessage(text=text, timestamp=timestamp)] if text else []
        return UserText("prompt", shown, injected)
    if "task-notification" in tags:
        fields = _notification_fields(text)
        return UserText("task_notification", [_notification_notice(text, fields, timestamp)])
    if "command-name" in tags:
        return UserText("command", [_command(text, timestamp)])
    if "local-command-stdout" in tags or "local-command-stderr" in tags:
        return UserText("local_output", _local_output(text, timestamp))
    if all(tag in _SILENT_WRAPPERS for tag in tags):
        return UserText("context", injected=[text])
    kind: UserTextKind = "notice"
    if "bash-input" in tags:
        kind = "shell_input"
    elif "bash-stdout" in tags or "bash-stderr" in tags:
        kind = "shell_output"
    notice = _wrapper_notice(text, tags, timestamp)
    return UserText(kind, [notice] if notice is not None else [])


def _usage_numbers(text: str) -> dict[str, float]:
    """``total_tokens: 900\\ntool_uses: 3\\nduration_ms: 4100`` as numbers by name; Claude Code
    2.1.337 writes them as elements, ``<tool_uses>3</tool_uses><duration_ms>4100</duration_ms>``.

    >>> _usage_numbers("<subagent_tokens>15</subagent_tokens><tool_uses>1</tool_uses>")
    {'subagent_tokens': 15.0, 'tool_uses': 1.0}
    """
    numbers = {name: float(value) for name, value in _USAGE_ELEMENT.findall(text)}
    for part in re.split(r"[\n,]", text):
        name, _, value = part.partition(":")
        try:
            numbers[name.strip()] = float(value.strip())
        except ValueError:
            continue
    return numbers


_USAGE_ELEMENT = re.compile(r"<(\w{1,40})>\s*(\d{1,15}(?:\.\d{1,6})?)\s*</\1>")


def _notification_fields(text: str) -> dict[str, str]:
    """A task (or, Claude Code 2.0, agent) notification's fields, empty when absent."""
    return {name: (_tag(text, name) or "").strip() for name in _NOTIFICATION_FIELDS}


def _typed_prompt(content: str) -> bool:
    """Whether a queued command's text is a prompt the user typed: not a harness wrapper
    (a notification, say) and not the JSON of a background task Claude Code 2.1.50 queues.

    >>> _typed_prompt("make state a literal[str]"), _typed_prompt('{"task_id":"b1"}')
    (True, False)
    >>> _typed_prompt("<task-notification><task-id>a</task-id></task-notification>")
    False
    """
    text = content.strip()
    if not text or _wrappers(text):
        return False
    if text.startswith("{") and text.endswith("}"):
        try:
            return not isinstance(codec.loads(text), dict)
        except ValueError:
            return True
    return True


def launched_async(extra: Mapping[str, Any]) -> bool:
    """Whether a ``toolUseResult`` says its call (an agent) was launched in the background,
    to run until its task notification: the session file and ``stream-json`` read it alike."""
    return extra.get("status") == "async_launched" or extra.get("isAsync") is True


def notified_status(status: str) -> ToolStatus:
    """A task notification's status as the outcome of its call, ``unknown`` for one not known;
    the session file's ``<status>`` and ``stream-json``'s ``status`` are read alike.

    >>> notified_status("stopped"), notified_status("failed"), notified_status("Completed")
    ('cancelled', 'error', 'success')
    """
    return _NOTIFIED_STATUS.get(status.lower(), "unknown")


def _settle_background(call: ToolCall, fields: dict[str, str], stamp: str | None) -> None:
    """A background call's outcome from its task notification: status, result, duration.

    The call ran from its launch until the notification; ``<usage>duration_ms`` is the
    recorded duration when there is one, else the span of the two timestamps counts.
    """
    call.status = notified_status(fields["status"])
    call.ended_at = stamp
    usage = _usage_numbers(fields["usage"])
    duration = usage.get("duration_ms")
    call.duration_ms = duration
    agent = call.subagent
    if agent is not None:
        # A summary is no report: the line the CLI shows for the notification (``Agent "x"
        # finished``, 2.0's ``Agent "x" completed.`` with "Read the output file to retrieve
        # the full result."), as stream-json's ``summary`` is one only under
        # ``summary_is_report``. A stopped or failed agent's (``Agent "x" was stopped by
        # Claude``) is why it ended; a completed one's says what its status does.
        report = fields["result"]
        call.result = background_agent_result(call.result, report or None)
        if not report and call.status != "success" and fields["summary"]:
            agent.reason = fields["summary"]
        if "tool_uses" in usage:
            agent.tool_count = int(usage["tool_uses"])
        if duration is not None:
            agent.duration_ms = duration
    else:
        previous = call.result.text if call.result and call.result.text else ""
        summary = fields["result"] or fields["summary"]
        if summary:
            call.result = text_result("\n".join(p for p in (previous, summary) if p))


# --- the run's tokens (spec U-1) ------------------------------------------------------------


def model_usage_totals(model_usage: Any) -> Tokens | None:
    """Claude Code's ``modelUsage`` (per model, camel-case names: the session file's
    ``cost-state``, ``stream-json``'s ``result``, the Claude Agent SDK's ``model_usage``) added
    up in :mod:`turnfold.usage`'s names, cached input counted in the input and the one-hour
    part of the cache writes (:data:`_ONE_HOUR_WRITES`) kept apart; None where a model's entry
    lacks a count (an older CLI's): a total that leaves a model out is no total. A model
    without the one-hour part (a CLI before it was counted) leaves it out of the total, not
    the rest."""
    if not isinstance(model_usage, Mapping) or not model_usage:
        return None
    totals: Tokens = {}
    hour: int | None = 0
    for counts in model_usage.values():
        if not isinstance(counts, Mapping):
            return None
        raw = {snake: counts.get(camel) for camel, snake in _MODEL_USAGE_NAMES.items()}
        found = counts_of(blocks.usage_of(raw))
        if len(found) < len(_MODEL_USAGE_NAMES):
            return None
        add_into(totals, found)
        written = counts_of({"cache_write_1h_tokens": counts.get(_ONE_HOUR_WRITES)})
        hour = hour + written["cache_write_1h_tokens"] if hour is not None and written else None
    if hour is not None:
        totals["cache_write_1h_tokens"] = hour
    return totals


#: ``ModelUsage``'s names of the counts, and the Anthropic ``usage`` names they stand for.
_MODEL_USAGE_NAMES = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheReadInputTokens": "cache_read_input_tokens",
    "cacheCreationInputTokens": "cache_creation_input_tokens",
}
#: ``ModelUsage``'s part of ``cacheCreationInputTokens`` written to the one-hour cache (Claude
#: Code 2.1.3xx), priced above a five-minute write (``Usage.cache_write_1h_tokens``).
_ONE_HOUR_WRITES = "cacheCreationEphemeral1hInputTokens"


def uncounted_subagent_usage(
    transcript: Transcript, agent_models: Mapping[str, str] | None = None
) -> None:
    """The tokens of sub-agents whose own file the session folder does not hold, from the
    session's ``cost-state`` (U-1: the header counts what the recorded cost covers).

    ``cost-state``'s ``modelUsage`` counts every request of the session, its sub-agents'
    included, and ``totalCostUSD`` is their price. A background agent whose
    ``subagents/agent-*.jsonl`` is not beside the session (a session file copied alone) has
    no response here to count; the notification's ``<usage>`` does not say what it spent
    (``subagent_tokens`` / ``totalTokens`` are its *last* response's input plus output). What
    ``modelUsage`` counts beyond the session's responses and its counted sub-agents is then
    theirs: one such agent's :attr:`~turnfold.model.SubAgent.usage`, several agents'
    ``metadata["subagent_usage"]`` (under no call: which one spent what is not recorded) —
    but for the CLI's own side requests (a title, a command's check, made with its small fast
    model), which no response records either: a model of ``modelUsage`` that no response
    names and no such agent ran on (``agent_models``: each background call's
    ``resolvedModel``, by call id) counts them, ``metadata["side_request_usage"]`` (model →
    counts). Where an agent's model is not recorded, nothing is told apart. A total below
    what the responses count (another file's requests, a different session) gives nothing."""
    model_usage = transcript.metadata.get("model_usage")
    run = model_usage_totals(model_usage)
    uncounted = [c for c in transcript.tool_calls() if c.subagent and not has_subagent_tokens(c)]
    if run is None or not isinstance(model_usage, Mapping) or not uncounted:
        return
    counted = transcript_tokens(transcript).combined
    spent = {name: run[name] - counted.get(name, 0) for name in run}
    if any(value < 0 for value in spent.values()):
        return
    side = _side_requests(transcript, model_usage, uncounted, agent_models or {})
    side_total: Tokens = {}
    for counts in side.values():
        add_into(side_total, counts)
    rest = {name: value - side_total.get(name, 0) for name, value in spent.items()}
    # A response that names no model may be a side model's: then nothing is told apart.
    if side and all(value >= 0 for value in rest.values()):
        spent = rest
        # Added to the warmups' (:meth:`_Reader.account_warmups`), which ``counted`` holds.
        for model, counts in side.items():
            add_into(transcript.metadata.setdefault("side_request_usage", {}).setdefault(model, {}),
                     counts)  # fmt: skip
    if spent.get("output_tokens", 0) <= 0:
        return
    if len(uncounted) > 1:
        transcript.metadata["subagent_usage"] = spent
        return
    (call,) = uncounted
    assert call.subagent is not None  # one of the calls with a sub-agent
    usage = Usage(
        input_tokens=spent.get("input_tokens"),
        output_tokens=spent["output_tokens"],
        cache_read_tokens=spent.get("cache_read_tokens"),
        cache_write_tokens=spent.get("cache_write_tokens"),
        # None, not 0, where no write was kept for an hour, as a message's usage reads.
        cache_write_1h_tokens=spent.get("cache_write_1h_tokens") or None,
    )
    agent = replace(call.subagent, usage=usage, output_tokens=spent["output_tokens"])
    transcript.update(call, subagent=agent)


def _side_requests(
    transcript: Transcript,
    model_usage: Mapping[str, Any],
    uncounted: list[ToolCall],
    agent_models: Mapping[str, str],
) -> dict[str, Tokens]:
    """What ``modelUsage`` counts under models that neither a response of the session (its
    counted sub-agents' included) names nor an uncounted agent ran on: the CLI's side
    requests, by model, so each is priced as its model's (U-2). Nothing where an uncounted
    agent's model is not recorded (it may be any)."""
    if any(c.call_id not in agent_models for c in uncounted):
        return {}
    used = {agent_models[c.call_id] for c in uncounted} | _models_named(transcript)
    # A warmup's model is counted already, with its run's tokens: nothing of it told apart.
    used |= set(transcript.metadata.get("side_request_usage") or ())
    side: dict[str, Tokens] = {}
    for model, counts in model_usage.items():
        counted = model_usage_totals({model: counts}) if model not in used else None
        if counted and any(counted.values()):
            side[str(model)] = counted
    return side


def _models_named(transcript: Transcript) -> set[str]:
    """The models the responses of ``transcript`` name, its sub-agents' at every level
    included (found by the model's own walk of every call, which takes no stack)."""
    levels = {id(transcript): transcript}
    for call in transcript.tool_calls(nested=True):
        child = call.subagent.transcript if call.subagent is not None else None
        if child is not None:
            levels.setdefault(id(child), child)
    named: set[str] = set()
    for level in levels.values():
        for entry in level.entries:
            model = entry.model if isinstance(entry, AssistantText) else entry.meta.get("model")
            if isinstance(model, str) and model:
                named.add(model)
    return named


def _call_ids(step: dict[str, Any]) -> list[str]:
    """The ids of the calls one sub-agent step (:func:`_step_record`) makes: those its own
    sub-agents' steps name as their ``parentToolUseID``."""
    message = step.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        block["id"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_use"
        and isinstance(block.get("id"), str)
    ]  # fmt: skip


def _step_record(message: Any, record: dict[str, Any]) -> dict[str, Any] | None:
    """The record of one ``agent_progress`` step: its ``data.message`` envelope (a user or
    assistant record of the sub-agent), or a bare Anthropic message as some writers keep it.

    Steps are read in file order, the order Claude Code wrote them: their ``parentUuid``
    links point into the sub-agent's own file, if at all, so they are dropped here.
    """
    if not isinstance(message, dict):
        return None
    inner = message.get("message")
    if isinstance(inner, dict) and "content" in inner:
        step = dict(message)
        step.setdefault("type", inner.get("role"))
    elif "content" in message and message.get("role") in ("user", "assistant"):
        step = {"type": message["role"], "message": message}
    else:
        return None
    step["parentUuid"], step["isSidechain"] = None, False
    step.setdefault("timestamp", record.get("timestamp"))
    return step


def _prompt_content(prompt: Any) -> tuple[str, list[ImageData]]:
    """A queued prompt (a string or Anthropic blocks) as text and pasted images."""
    if isinstance(prompt, str):
        return prompt, []
    texts: list[str] = []
    images: list[ImageData] = []
    for block in prompt if isinstance(prompt, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "image" and (image := blocks.image_of(block)) is not None:
            images.append(image)
        elif block.get("type") in blocks.ATTACHMENT_TYPES or block.get("type") == "image":
            texts.append(blocks.attachment_line(block))
    return "\n\n".join(t for t in texts if t.strip()), images


def interruption(text: str) -> str | None:
    """The reason of a ``[Request interrupted by user…]`` line (the user stopped the turn), or
    None for any other text: the line Claude Code writes is no prompt of the user's.

    >>> interruption("[Request interrupted by user for tool use]")
    'Request interrupted by user for tool use'
    """
    head = text.lstrip()[:200]
    return head.strip().strip("[]") if head.startswith(_INTERRUPTED) else None


def tool_outcome(
    call: ToolCall,
    status: ToolStatus,
    result: ToolResult,
    record: Mapping[str, Any],
    extra: Any,
    cwd: str | None,
) -> tuple[ToolStatus, ToolResult]:
    """A call's status and result from its ``tool_result`` (``status``, ``result``), the line
    that holds it (``record``) and that line's ``toolUseResult`` (``extra``): Claude Code's own
    signals refine the status, and the result takes the form its tool deserves (a diff, a todo
    list, a plan, a sub-agent's report). The session file and ``stream-json`` (whose user events
    carry the same object as ``tool_use_result``) are read by this one rule."""
    status = _refined_status(status, result.text, record, extra)
    if result.text and result.text.startswith(_TOOL_ERROR):
        result.text = result.text[len(_TOOL_ERROR) :].removesuffix("</tool_use_error>")
    args = call.args if isinstance(call.args, dict) else {}
    if call.name == "ExitPlanMode" and isinstance(args.get("plan"), str):
        return status, ToolResult(text=args["plan"], kind="plan")
    if status != "success":
        return status, result
    patch = extra.get("structuredPatch") if isinstance(extra, dict) else None
    if isinstance(patch, list):
        diff = _unified_diff(patch, extra, args, cwd)
        if diff:
            return status, ToolResult(text=diff, kind="diff")
    if call.name == "TodoWrite":
        todos = extra.get("newTodos") if isinstance(extra, dict) else None
        todos = todos if isinstance(todos, list) else args.get("todos")
        if isinstance(todos, list):
            return status, ToolResult(text=_checklist(todos), kind="todo", structured=todos)
    if call.name in AGENT_TOOLS:
        text = agent_report(extra) or result.text
        if failed_on_api_error(extra):
            status = "error"  # the report, the error's whole text, stays what was recorded
        return status, ToolResult(text=text, kind="subagent", images=result.images)
    return status, result


def failed_on_api_error(extra: Any) -> bool:
    """Whether a finished sub-agent's report (its call's ``toolUseResult``) is the API error it
    stopped on, not words of its own: its call failed, though Claude Code records it completed
    (``is_error`` false).

    Claude Code hands back the text of the sub-agent's last message, with that message's
    ``usage`` (2.1.79's ``cli.js``: the Agent tool's ``finalizeAgentTool``, ``tZ8``). When the
    sub-agent's request fails, its last message is the one Claude Code writes for the error
    (``R9``: ``isApiErrorMessage``, model ``<synthetic>``): one text, ``API Error: `` and the
    API's reply (``400 {"type":"error",…}``), and a usage that counts no token, as no response
    came. A report that merely mentions an API error is the model's, with its tokens.

    >>> failed_on_api_error({"status": "completed", "usage": {"input_tokens": 0,
    ...     "output_tokens": 0}, "content": [{"type": "text", "text": "API Error: 400 {}"}]})
    True
    """
    if not isinstance(extra, Mapping) or extra.get("status") != "completed":
        return False
    content, usage = extra.get("content"), extra.get("usage")
    if not (isinstance(content, list) and len(content) == 1 and isinstance(usage, Mapping)):
        return False
    text = content[0].get("text") if isinstance(content[0], Mapping) else None
    counted = [usage.get(key) for key in ("input_tokens", "output_tokens")]
    return (
        isinstance(text, str)
        and text.startswith(_API_ERROR)
        and all(type(count) is int and count == 0 for count in counted)
    )


def recorded_duration(extra: Mapping[str, Any]) -> float | None:
    """A ``toolUseResult``'s recorded duration: a sub-agent's whole run, else the call's."""
    duration = extra.get("totalDurationMs", extra.get("durationMs"))
    if isinstance(duration, (int, float)) and not isinstance(duration, bool):
        return float(duration)
    return None


def agent_report(extra: Any) -> str | None:
    """The report a finished sub-agent handed back: the text of its ``toolUseResult.content``
    (``AgentOutput`` in Claude Code's tool types), None when there is none.

    The ``tool_result`` the model read wraps that report in words meant for the model, which
    the sub-agent never wrote: Claude Code 2.1.3xx a ``[Subagent hand-back]`` frame around it,
    later builds an ``agentId: … (use SendMessage …)`` line and a ``<usage>`` block after it;
    ``content`` may hold harness notes (a block of wrapper elements alone) beside the report.

    >>> agent_report({"status": "completed", "content": [{"type": "text", "text": "Done."}]})
    'Done.'
    """
    if not isinstance(extra, Mapping):
        return None
    handed = handback_report(extra.get("handbackReport"))
    if handed is not None:
        return handed
    content = extra.get("content")
    if not isinstance(content, list):
        return None
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"].strip()
        # A harness note among them (``<tools-used-before-summary>``, ``harnessNoteCount``)
        # is for the model too.
        and not _wrappers(block["text"])
    ]
    return "\n\n".join(texts) or None


def handback_report(report: Any) -> str | None:
    """The report a sub-agent handed back through its ``SubagentHandback`` tool (Claude Code
    2.1.3xx: ``handbackReport`` on the ``Agent`` call's ``toolUseResult``, ``handback_report`` on
    ``stream-json``'s ``task_notification``, one shape): its ``text``, with auto mode's
    ``warning`` above it when it has one, as the CLI asks a client to show it; None where there
    is no report (``handback: "withheld"``).

    >>> handback_report({"text": "Done.", "warning": "SECURITY WARNING: flagged."})
    'SECURITY WARNING: flagged.\\n\\nDone.'
    """
    if not isinstance(report, Mapping):
        return None
    text, warning = _str(report.get("text")), _str(report.get("warning"))
    if text is None:
        return None
    return f"{warning}\n\n{text}" if warning else text


def handback_origin_report(origin: Mapping[str, Any]) -> str | None:
    """The report of a hand-back queued for the main conversation (the ``origin`` of its
    prompt): ``handbackReportText`` with ``handbackNote`` above it, as
    :func:`handback_report` shows a report and its warning; without the text, read from the
    ``body`` the way the CLI reads it back (the note, the frame line, the report, every line
    but the frame's indented two spaces). None where neither gives a report.

    >>> body = "  Flagged.\\n[Subagent hand-back] The report follows:\\n  Done."
    >>> handback_origin_report({"body": body})
    'Flagged.\\n\\nDone.'
    """
    text, note = _str(origin.get("handbackReportText")), _str(origin.get("handbackNote"))
    body = origin.get("body")
    if text is None and isinstance(body, str):
        lines = body.split("\n")
        frame = next((i for i, line in enumerate(lines) if line.startswith(_HANDBACK_FRAME)), None)
        if frame is not None and all(
            line.startswith("  ") for i, line in enumerate(lines) if i != frame
        ):
            text = "\n".join(line[2:] for line in lines[frame + 1 :]) or None
            note = note or "\n".join(line[2:] for line in lines[:frame]) or None
    return handback_report({"text": text, "warning": note})


#: The start of the line the CLI writes above a handed-back report, in the body of its prompt.
_HANDBACK_FRAME = "[Subagent hand-back] "


def background_agent_result(launched: ToolResult | None, report: str | None) -> ToolResult | None:
    """A background agent's call result once its task notification came: its report where the
    notification carries one, else what its launch returned (an agent stopped or failed
    without a report handed nothing back). The session file and ``stream-json`` settle it by
    this one rule."""
    return ToolResult(text=report, kind="subagent") if report else launched


def _first_line(text: str | None) -> str | None:
    if not text:
        return None
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line[:200] or None


#: The prompt Claude Code gives the agents it starts on its own, before any call asks for one,
#: to fill the prompt cache (2.0.x beside the session, 2.1.x in ``subagents/``: "The warmup
#: requests are used by the CLI to pre-populate the prompt cache",
#: anthropics/claude-agent-sdk-python#445; anthropics/claude-code#13326, #17457).
_WARMUP_PROMPT = "Warmup"
#: The first record of each agent file read beside a session, by path, with the size and time
#: it was read at: a folder of Claude Code 2.0 holds every session's agent files, which each
#: session's load would otherwise open again (Q-4). Bounded: cleared when full.
_HEADS: dict[Path, tuple[int, int, dict[str, Any] | None]] = {}
_MAX_HEADS = 1 << 16


def _is_warmup(child: Transcript) -> bool:
    """Whether an agent's transcript is a warmup run: its one prompt is Claude Code's
    ``Warmup`` and it called no tool."""
    prompts = [e for e in child.entries if isinstance(e, UserMessage)]
    return (
        len(prompts) == 1
        and prompts[0].text.strip() == _WARMUP_PROMPT
        and not any(isinstance(e, ToolCall) for e in child.entries)
    )


def _response_model(entry: Entry) -> str | None:
    """The model of the response whose usage ``entry`` carries."""
    model = entry.model if isinstance(entry, AssistantText) else entry.meta.get("model")
    return model if isinstance(model, str) and model else None


def _may_hold(folder: Path) -> bool:
    """Whether ``folder`` may hold a session's sub-agent files: it is a folder, or one that
    cannot be looked at (a folder above it not searchable), kept so that the lookups in it say
    so (:meth:`_Reader.unlisted`) rather than pass it over as absent."""
    try:
        return folder.is_dir()
    except OSError:
        return True


def _agent_files_of(folder: Path, sessions: set[str], unlisted: NotListed) -> list[Path]:
    """The ``agent-*.jsonl`` files in ``folder`` (a project folder of Claude Code 2.0, which
    writes its sub-agents' files beside the sessions) whose first record names one of
    ``sessions`` in ``sessionId``; ``folder`` not listed is told to ``unlisted``."""
    found = []
    for file in sibling_files(folder, "agent-*.jsonl", unlisted):
        head = _first_record(file)
        if head is not None and head.get("sessionId") in sessions:
            found.append(file)
    return found


def _first_record(path: Path) -> dict[str, Any] | None:
    """The first record of ``path`` when it is a JSON object, read once per size and time of
    the file (:data:`_HEADS`); a first line not yet ended (a file being written) is read
    again next time."""
    try:
        stat = path.stat()
    except OSError:
        return None
    known = _HEADS.get(path)
    if known is not None and known[:2] == (stat.st_size, stat.st_mtime_ns):
        return known[2]
    first, record = b"", None
    try:
        with path.open("rb") as stream:
            first = stream.readline(1 << 20)
        record = codec.loads(first) if first.endswith(b"\n") else None
    except (OSError, ValueError):
        pass
    head = record if isinstance(record, dict) else None
    if first.endswith(b"\n"):
        if len(_HEADS) >= _MAX_HEADS:
            _HEADS.clear()
        _HEADS[path] = (stat.st_size, stat.st_mtime_ns, head)
    return head


def _safe_name(agent_id: str) -> bool:
    """Agent ids come from the file: only plain names may become part of a path (spec X-1)."""
    return agent_id.replace("-", "").replace("_", "").isalnum()


def _refined_status(
    reported: ToolStatus, text: str | None, record: Mapping[str, Any], extra: Any
) -> ToolStatus:
    """Claude Code's own signals on top of ``is_error``; only the head of the text is read."""
    head = text[:200].lstrip() if text else ""
    if record.get("toolDenialKind") or head.startswith(_REJECTED) or head.startswith(_INTERRUPTED):
        return "cancelled"
    if isinstance(extra, dict) and extra.get("interrupted") is True:
        return "cancelled"
    if head.startswith(_TOOL_ERROR):
        return "error"
    return reported


def _record_stats(spawn: _Spawn, extra: dict[str, Any], line: int) -> None:
    """The sub-agent stats a Task result records (``toolUseResult``, on ``line``)."""
    agent = spawn.call.subagent
    if agent is None:
        return
    agent_id = _str(extra.get("agentId"))
    if agent_id:
        spawn.agent_id = agent.agent_id = agent_id
        spawn.agent_id_line = line
    count = extra.get("totalToolUseCount")
    if isinstance(count, int) and not isinstance(count, bool):
        agent.tool_count = count
    duration = extra.get("totalDurationMs")
    if isinstance(duration, (int, float)) and not isinstance(duration, bool):
        agent.duration_ms = float(duration)
    spawn.last_usage = blocks.usage_of(extra.get("usage"))


def _with_last_response(child: Transcript | None, last: Usage | None) -> None:
    """Count the response that ended a sub-agent's run in the tokens of its transcript read
    from ``agent_progress`` steps, where the steps leave it out.

    Claude Code (2.1.5x, real sessions) writes a step for each of the agent's tool calls and
    results only: the response that ended the run calls no tool and is not among them, so
    steps that end on a call lack it. Its usage is the one its Task result records, which
    is that response's alone: the agent's own tokens are its steps' responses, each once,
    and that one (U-1), recorded as the transcript's total (``metadata["usage"]``).
    """
    if child is None or last is None:
        return
    responses = [e for e in child.entries if isinstance(e, USAGE_KINDS)]
    if not responses or not isinstance(responses[-1], ToolCall):
        return  # the run's last response is among the steps and already counted
    spent = count_tokens(child.entries)
    add_into(spent, counts_of(last))
    child.metadata["usage"] = spent


def _command(text: str, stamp: str | None) -> UserMessage:
    name = (_tag(text, "command-name") or "").strip()
    if name and not name.startswith("/"):
        name = "/" + name
    args = (_tag(text, "command-args") or "").strip()
    return UserMessage(text=args, command=name or None, timestamp=stamp)


def _local_output(text: str, stamp: str | None) -> list[Entry]:
    notices: list[Entry] = []
    for tag, level in (("local-command-stdout", "info"), ("local-command-stderr", "error")):
        inner = (_tag(text, tag) or "").strip()
        if inner:
            notices.append(
                SystemNotice(text=inner, level=level, subtype="local_command", timestamp=stamp)  # type: ignore[arg-type]
            )
    return notices


def _fallback_notice(part: dict[str, Any]) -> SystemNotice:
    def model(side: Any) -> str:
        return _str(side.get("model")) or "?" if isinstance(side, dict) else "?"

    sides = {"model": model(part.get("from")), "fallback": model(part.get("to"))}
    return notice("reader.model_fallback.from_to", sides, subtype="fallback")


def _boundary(record: dict[str, Any]) -> CompactionBoundary:
    meta = record.get("compactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    pre = meta.get("preTokens")
    return CompactionBoundary(
        trigger=_str(meta.get("trigger")) or _str(record.get("trigger")),
        pre_tokens=pre if isinstance(pre, int) and not isinstance(pre, bool) else None,
    )


def _error_text(error: Any) -> tuple[str, Wording | None]:
    """A readable message from the many shapes of ``error`` Claude Code records, with its
    wording where turnfold words it (a plain string is Claude Code's own).

    Claude Code 2.1.3xx keeps the API's raw reply in ``message`` (``529 {"type":"error",…}``)
    and the line it shows in ``formatted`` (``529 Overloaded``): the shown line is read, less
    the status it starts with (the prefix names it)."""
    if isinstance(error, str):
        return error, None
    if not isinstance(error, dict):
        return worded("reader.api_error")
    status = error.get("status")
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    nested = error.get("error")
    message: str | None
    if (shown := _str(error.get("formatted"))) is not None:
        message = shown.strip()
        if status is not None:
            message = message.removeprefix(str(status)).strip() or message
    elif isinstance(nested, dict):
        inner = nested.get("error")
        source = inner if isinstance(inner, dict) else nested
        message = _str(source.get("message")) or _str(source.get("type"))
    else:
        message = _str(error.get("message")) or _str(error.get("type"))
    key = "reader.api_error" + (".status" if status else "") + (".said" if message else "")
    return worded(key, {"status": status, "said": message} if status else {"said": message})


def _api_error(record: dict[str, Any]) -> Entry:
    """An API error; while Claude Code still retries, it is a notice, not a failed turn."""
    attempt, most = record.get("retryAttempt"), record.get("maxRetries")
    retrying = isinstance(record.get("retryInMs"), (int, float)) and record["retryInMs"] > 0
    if retrying or (isinstance(attempt, int) and isinstance(most, int) and attempt < most):
        return retry_notice(record.get("error"), attempt, most)
    message, wording = _error_text(record.get("error"))
    return AssistantError(message=message, wording=wording)


def retry_notice(error: Any, attempt: Any, most: Any) -> SystemNotice:
    """The warning of a failed API request Claude Code retries: the session file's
    ``system/api_error`` while it still retries, and ``stream-json``'s ``system/api_retry``
    (which the CLI makes of that same record)."""
    text, wording = _error_text(error)
    if isinstance(most, int):
        tries = {"attempt": str(attempt), "most": most}
        if wording is not None:
            text, wording = worded(wording.key + ".retrying", {**wording.params, **tries})
        else:  # Claude Code's own words for the error, turnfold's for the retry
            text, wording = worded("reader.retrying", {"said": text, **tries})
    return SystemNotice(text=text, wording=wording, level="warning", subtype="api_error")


def _refusal(record: dict[str, Any]) -> AssistantError:
    category = _str(record.get("apiRefusalCategory"))
    explanation = _str(record.get("apiRefusalExplanation"))
    key = "reader.refused" + (".category" if category else "") + (".said" if explanation else "")
    return failure(key, {"category": category, "said": explanation})


def _hook_errors(record: dict[str, Any]) -> SystemNotice | None:
    errors = record.get("hookErrors")
    if not isinstance(errors, list) or not errors:
        return None
    text = "\n".join(e if isinstance(e, str) else stringify(e) for e in errors)
    return SystemNotice(text=text, level="warning", subtype="stop_hook_summary")


def _notice(record: dict[str, Any], subtype: str | None) -> SystemNotice | None:
    content = record.get("content")
    if not isinstance(content, str) or not content.strip():
        if subtype == "model_refusal_fallback":
            content = (
                f"Model fallback: {record.get('originalModel')} → {record.get('fallbackModel')}"
            )
        else:
            return None
    if "<local-command-stdout>" in content:
        content = _tag(content, "local-command-stdout") or ""
    level = record.get("level")
    return SystemNotice(
        text=content.strip(),
        level=level if level in _LEVELS else "info",
        subtype=subtype,
    )


def _relative(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path.lstrip("/")


def _unified_diff(
    patch: list[Any], extra: dict[str, Any], args: dict[str, Any], cwd: str | None
) -> str | None:
    """``structuredPatch`` hunks as a unified diff; a newly created file as one added hunk."""
    path = _str(extra.get("filePath")) or _str(args.get("file_path")) or "file"
    shown = _relative(path, cwd)
    lines = [f"--- a/{shown}", f"+++ b/{shown}"]
    for hunk in patch:
        if not isinstance(hunk, dict):
            continue
        numbers = [hunk.get(k) for k in ("oldStart", "oldLines", "newStart", "newLines")]
        if not all(isinstance(n, int) for n in numbers):
            continue
        lines.append("@@ -{},{} +{},{} @@".format(*numbers))
        lines.extend(x for x in as_list(hunk.get("lines")) if isinstance(x, str))
    if len(lines) == 2 and extra.get("type") == "create" and isinstance(extra.get("content"), str):
        added = extra["content"].split("\n")
        lines[0] = "--- /dev/null"
        lines.append(f"@@ -0,0 +1,{len(added)} @@")
        lines.extend("+" + x for x in added)
    return "\n".join(lines) if len(lines) > 2 else None


_TODO_MARKS = {"completed": "[x]", "in_progress": "[~]"}


def _checklist(todos: list[Any]) -> str:
    """A todo list as text: ``[x]`` done, ``[~]`` in progress, ``[ ]`` pending."""
    rows = []
    for todo in todos:
        if isinstance(todo, dict):
            text = _str(todo.get("content")) or _str(todo.get("subject")) or ""
            rows.append(f"{_TODO_MARKS.get(str(todo.get('status')), '[ ]')} {text}")
    return "\n".join(rows)


# --- branches -------------------------------------------------------------------------------------


def _abandoned(nodes: list[_Node]) -> set[int]:
    """Indexes of the nodes on branches a rewind left behind.

    Walk back from the last conversational record (through ``logicalParentUuid`` across a
    compaction) to find the active branch. Where it forks, a sibling branch is dropped only when
    it starts with a user prompt and was written entirely before the active branch went on: that
    is what a rewind leaves. Forks of any other shape (parallel tool results, retries, broken
    synthetic ids) are kept, so nothing readable is lost on a guess.
    """
    links = [node.parent or node.logical_parent for node in nodes]
    linked = [link for link in links if link is not None]
    if len(set(linked)) == len(linked):
        return set()  # no record has two children: no fork, so no branch to leave behind
    by_uuid: dict[str, int] = {}
    children: dict[str, list[int]] = {}
    for index, node in enumerate(nodes):
        if node.uuid is not None:
            by_uuid[node.uuid] = index
        link = node.parent or node.logical_parent
        if link is not None:
            children.setdefault(link, []).append(index)
    start = next(
        (i for i in range(len(nodes) - 1, -1, -1) if nodes[i].conversational and nodes[i].uuid),
        None,
    )
    if start is None:
        return set()
    path: set[str] = set()
    step: int | None = start
    while step is not None:
        node = nodes[step]
        if node.uuid is None or node.uuid in path:
            break
        path.add(node.uuid)
        link = node.parent or node.logical_parent
        step = by_uuid.get(link) if link is not None else None
    dropped: set[int] = set()
    for uuid in path:
        kids = children.get(uuid, [])
        if len(kids) < 2:
            continue
        resumed = min((nodes[k].line for k in kids if nodes[k].uuid in path), default=None)
        if resumed is None:
            continue
        for kid in kids:
            if nodes[kid].uuid in path or not nodes[kid].prompt:
                continue
            branch = _subtree(kid, nodes, children)
            if all(nodes[i].line < resumed and nodes[i].uuid not in path for i in branch):
                dropped |= branch
    return dropped


def _subtree(root: int, nodes: list[_Node], children: dict[str, list[int]]) -> set[int]:
    seen = {root}
    stack = [root]
    while stack:
        uuid = nodes[stack.pop()].uuid
        for kid in children.get(uuid, []) if uuid is not None else []:
            if kid not in seen:
                seen.add(kid)
                stack.append(kid)
    return seen
