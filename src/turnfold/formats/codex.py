"""Codex CLI rollout JSONL (spec L-2.3): ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Layouts:

- current: one ``{"timestamp", "type", "payload"}`` envelope per line, ``type`` one of
  ``session_meta``, ``turn_context``, ``response_item``, ``event_msg``, ``compacted`` (newer
  builds add ``inter_agent_communication`` mail, and ``world_state``,
  ``inter_agent_communication_metadata`` and ``security_risk_score`` read as bookkeeping);
- legacy (mid-2025): a bare ``{"id", "timestamp", "instructions", "git"}`` first line, then bare
  Responses items and ``{"record_type": "state"}`` lines, without timestamps.

``response_item`` payloads are Responses API items, converted by
:class:`~turnfold.formats.openai_responses.ResponsesBuilder`; this module adds what Codex knows
beyond the API (:class:`CodexBuilder`):

- **User prompts.** ``event_msg/user_message`` and the ``response_item`` user message carry the
  same text: one :class:`UserMessage` is kept, whichever came first. Injected context is not a
  prompt and is dropped: developer/system messages, ``# AGENTS.md instructions``,
  ``<environment_context>``, ``<user_instructions>``, ``<permissions instructions>``,
  ``<turn_aborted>`` and the other ``<snake_case>…</snake_case>`` fragments Codex wraps its
  context in. ``<user_shell_command>`` (a command the user ran with ``!``) becomes a
  ``user_initiated`` ``shell`` :class:`ToolCall` (spec F-14). An IDE prompt keeps only the text
  after ``## My request for Codex:`` (the editor context goes to ``meta["ide_context"]``).
  The warnings Codex gave the model mid-turn as user-role messages (``Warning: apply_patch was
  requested via …``, the open-process limit, a request re-routed: :func:`model_warning`) are
  such context too, as Codex itself counts them: no prompt, and no new turn.
- **Assistant text and reasoning** come from the ``response_item``; ``agent_message`` and
  ``agent_reasoning`` events that repeat them are dropped (an event with no item copy is kept).
- **Plan mode.** The model writes its plan inside the reply, in a ``<proposed_plan>`` block;
  the ``agent_message`` event carries the reply without it and a ``Plan`` item
  (``item_completed``) the plan alone. One :class:`AssistantText` shows the reply with the
  plan in its place as a Markdown section (:func:`plan_sections`, plan in
  ``meta["proposed_plan"]``); a ``Plan`` item no reply carried is its own AssistantText at the
  end of the turn.
- **Tool calls** pair with their outputs by ``call_id``. Codex records no error flag, so the
  status is derived (spec L-3): an exit code in the output (``{"output", "metadata":
  {"exit_code"}}`` JSON, or an ``Exit code: N`` / ``Process exited with code N`` header) gives
  ``success`` when 0 and ``error`` otherwise; otherwise ``exec_command_end.exit_code``,
  ``patch_apply_end.success``, ``mcp_tool_call_end`` (``Ok`` / ``Err`` / ``isError``),
  ``dynamic_tool_call_response.success`` and the ``McpToolCall`` / ``DynamicToolCall`` items of
  ``item_completed`` (their ``status``) decide; an output of ``aborted`` (``aborted by user``,
  ``aborted by user after 7.6s``: :func:`was_aborted`) is ``cancelled``; a
  plain-text output whose first line states a failure (non-zero exit code, rejected,
  verification failed, timed out, ``execution error:``, older Codex's ``error:`` / ``tool call
  error:``: :func:`states_failure`, the one place of that rule) is
  ``error``; Codex's own multi-agent tools (``spawn_agent``, ``wait_agent``, ``send_message``,
  ``list_agents``, ``followup_task``, ``wait`` …, namespaces ``multi_agent_v1`` and
  ``collaboration``; ``wait`` on agent ``ids`` is the first tools' ``wait_agent``) are
  ``success`` when they answered otherwise, and so is ``update_plan``
  answering ``Plan updated`` (its only answer when it took the plan); anything else stays
  ``unknown``. The header is taken off the shown output and kept in ``meta["output_header"]``
  (``meta["exit_code"]`` too); ``Wall time`` / ``duration_seconds`` / an event's ``duration``
  is the recorded ``duration_ms``. An ``apply_patch`` call's patch is its arguments; its result
  is the tool's own message ("Success. Updated the following files: …", or why it failed),
  followed by ``patch_apply_end``'s unified diff when recorded. ``update_plan`` results are
  plans. A ``web_search_call`` is described as Codex says it (the Responses rule,
  :func:`~turnfold.formats.openai_responses.web_search_detail`: ``'pattern' in url`` for a
  find in a page). MCP calls (``namespace: "mcp__<server>…"``)
  are named ``mcp__<server>__<tool>``;
  their results are MCP content blocks as :mod:`turnfold.formats.mcp` shows them (in the
  output, a block that is neither text nor image is its JSON in an ``input_text`` part, read as
  the block it is); a block type MCP does not define, in an end event or item, is warned about
  once.
  Events only enrich calls still waiting for their output, save a process an ``exec_command``
  left running (``Process running with session ID 20075``): a call answered while its process
  went on has no outcome yet (``unknown``, ``meta["still_running"]``: "Still running"), and
  the process's end is the outcome of the call that started it: its ``CommandExecution`` item
  (0.171), else its ``exec_command_end`` (the exit watcher's, kept by app-server threads with
  extended history, February to June 2026: 0.110), both with exit code and duration, else
  (``codex exec`` before 0.171 writes neither) the exit code of the ``write_stdin`` answer
  that saw it end (``Process exited with code 4``). ``write_stdin`` polls such a process (no
  ``chars``) or types into it; it is part of running the command (a command, as Claude Code's
  ``BashOutput``), described by that command (the ``chars`` first, as JSON), its session in
  ``meta["session_id"]``, its status read from its own header as any output's.
- **Code mode.** A ``custom_tool_call`` ``exec`` whose input is a script calling ``tools.*``
  is described by the commands it ran (``tools.exec_command({cmd})``, or the command as a
  plain string, which Codex refuses: the cell's answer says so; else the tools it called,
  else its first line of code); its status comes from the exit codes it printed, else
  from its answer: ``Script completed`` (it ran to its end) is ``success``. The end events of
  the calls the script made (``mcp_tool_call_end``, ``patch_apply_end``, ``exec_command_end`` with a
  ``call_id`` no item holds, ``exec-<uuid>``) become calls nested under it (its
  :class:`SubAgent` transcript); Codex 0.171 writes a script's commands only as
  ``item_completed`` ``CommandExecution`` items (``exec-<uuid>``), each nested under the cell
  whose script runs that command. A script that runs on yields its cell (``Script running with
  cell ID 8``: "Still running", as a process left running), and code mode's ``wait``
  (``{cell_id, yield_time_ms}``) returns what it printed next: a command of the script's, named
  ``exec wait`` (its tool's name in ``meta["tool"]``), described by its cell's commands (else
  ``cell 8``), its status read as ``exec``'s: a script that threw (``Script failed``) is
  ``error``, one a ``wait`` with ``terminate`` stopped (``Script terminated``) ``cancelled``,
  whatever it printed; one that yields again is still running. The ``wait`` whose answer ends
  the script gives the yielded cell its outcome and its id (``meta["collected_by"]``); the
  cell's result stays as recorded. Each answer holds only what the script
  printed since the one before, so the cell's outcome counts the exit codes printed in all of
  them (:func:`script_outcome`): a failing one printed before a yield fails the cell at once,
  and the ``wait`` that collects it is still a success. A command of a stopped cell that ends
  after it (killed: exit code -1) is ``cancelled``. A script's ``notify(value)`` writes one
  more ``custom_tool_call_output`` under its cell's call id while it runs (codex-rs
  ``core/src/tools/code_mode/mod.rs``, ``CoreTurnHost::notify``: plain text, no ``Script …``
  header, recorded after the cell's answer): it is added to the cell's shown output in record
  order (``meta["notifications"]``) and leaves its status as it is. One recorded before the
  answer (injected input: nothing orders the two; told by the ``name`` the injection writes)
  shows while the cell runs, and the answer follows it.
  Codex keeps a yielded cell running when its turn ends (its cells belong to the session,
  not the turn: a ``wait`` in a later turn collects it, and the commands its script runs then
  are still its own); at ``task_complete`` a cell no ``wait`` collected reads "Still running
  when the turn ended" (``meta["running_at_turn_end"]``), and a file cut off before it keeps
  it "Still running".
- **Batches.** Codex items carry no response id: consecutive calls form one batch,
  ``turn<n>-batch<k>``, ended by any message, reasoning or output.
- **Turns.** ``task_started`` / ``turn_started`` (or, in files without them, a new prompt) start
  a turn. ``turn_aborted`` → :class:`AbortMarker`, and the turn's calls still waiting for an
  output become ``cancelled``. A turn that ends with neither ``task_complete`` nor
  ``turn_aborted`` (``codex exec`` up to 0.89 quits on Ctrl-C before writing them) ends in an
  interrupt marker when a call of it was answered ``aborted by user`` (its waiting calls
  cancelled), else, when a call still waits for its output, in a marker saying the record
  stops before that result (the call stays ``unknown``): :meth:`CodexBuilder._close_turn`.
  ``task_complete.duration_ms`` (and ``time_to_first_token_ms``)
  go to the ``meta`` (``turn_duration_ms``) of the turn's last :class:`AssistantText`, else of
  its :class:`UserMessage`; with an aborted turn's ``turn_aborted.duration_ms`` (on its
  :class:`AbortMarker`), their sum is ``metadata["duration_ms"]``. A zero turn duration is a
  placeholder, not a recording. ``task_complete.error`` and ``error`` events are
  :class:`AssistantError`.
- **Usage.** ``token_count.info.last_token_usage`` (else what the cumulative
  ``total_token_usage`` grew by since the previous one) goes on the AssistantText written
  since the previous ``token_count`` (the text of that model response), else on its first
  reasoning or call; a ``token_count`` repeating the previous totals is not a response of its
  own. Builds of 2025 (0.40, 0.60) wrote a response's reasoning and text events, then its
  ``token_count``, then its items: a ``turn_context`` or a ``token_count`` with no new usage
  (the next request's rate limits) ends what a usage may go on, and a usage with nothing
  written before it goes on the first entry after it. Their sum is ``metadata["usage"]``.
- **Compaction.** ``compacted`` (its ``message`` is the summary; ``replacement_history`` replays
  earlier items and is not shown again) and ``event_msg/context_compacted`` → one
  :class:`CompactionBoundary` when nothing lies between them, as does a remote ``compaction``
  or server-side ``context_compaction`` item.
- **Session.** The first ``session_meta`` gives ``metadata``: ``session_id``, ``started_at``
  (a ``timestamp`` that is no time is warned of on its line), ``cwd``, ``version`` (and
  ``cli_version``), ``originator``, ``source``, ``model_provider``, ``git``,
  ``forked_from_id``; for a sub-agent's own rollout (``source.subagent``) also
  ``subagent``, ``parent_session_id``, ``agent_name``, ``agent_role``. Later ``session_meta``
  lines mark a resume or fork and are skipped. ``turn_context.model`` is ``metadata["model"]``
  (the first) and each AssistantText's ``model``; ``thread_name_updated`` is the ``title``.
- **Sub-agents.** A ``spawn_agent`` call carries a :class:`SubAgent` (task from its arguments;
  thread id and name from its output, ``collab_agent_spawn_end`` and ``sub_agent_activity``).
  A spawn that failed (its output says so, or ``collab_agent_spawn_end.status`` is
  ``not_found`` / ``errored``) is ``error``. When the rollout is a file, the child thread's own
  rollout is found by its id, whatever the file is called: ``*<thread id>.jsonl`` beside the
  parent or anywhere in the ``sessions/YYYY/MM/DD`` tree, else a file beside it whose
  ``session_meta`` has that id or names this session as its parent; it is loaded as the
  sub-agent's transcript (its records join this load's accounting), its own children's in
  turn, down to :data:`~turnfold.nesting.MAX_DEPTH` levels: a child one deeper is named in a
  warning on its spawn's line, as one already shown above it (a circle of rollouts) is.
- **Model.** Each AssistantText has the model of its response (``turn_context.model``, switched
  by ``thread_settings_applied``); a response of calls only names it in its first entry's
  ``meta["model"]``.
- **Notices.** ``warning``, ``stream_error``, ``background_event``, ``deprecation_notice``,
  ``thread_rolled_back`` and ``undo_completed`` → :class:`SystemNotice`; ``entered_review_mode``
  → a notice naming what the review covers. ``exited_review_mode``'s findings are the answer,
  unless the assistant text that follows repeats them; a review prompt written twice is shown
  once. Inter-agent mail (``agent_message`` items, ``inter_agent_communication`` records of
  older builds) is one ``agent_message`` row inside the turn (``author → recipient``, the
  payload as Markdown, encrypted parts said once). ``thread_goal_updated`` keeps the goal in
  ``metadata["goal"]`` and is a notice when its objective or status changes.

Every line is accounted for (issue 11) under its type (``event_msg/token_count``,
``compacted``): :data:`RECORDS` lists what each type becomes, and the types left out by design
with the reason: ``world_state``, ``inter_agent_communication_metadata``,
``security_risk_score``, ``{"record_type": "state"}``,
``ghost_snapshot`` items, and the events in :data:`SILENT_EVENTS` (deltas, ``*_begin``,
approvals, ``item_*``, ``collab_*`` other than the spawn …). Other unknown event and record
types get one warning per type (every line of them counted as warned); unknown
``response_item`` types one warning per line (they may hold model-visible content); placeholder
timestamps one warning in all.

A source with no Codex record at all (say a Claude Code session read with ``format="codex"``)
raises :class:`TranscriptFormatError` rather than returning an empty transcript.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from turnfold import codec
from turnfold.formats import mcp
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    as_int,
    checked_timestamp,
    describe_args,
    partial_output,
    relative,
    stringify,
    text_result,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.openai_responses import (
    ResponsesBuilder,
    describe_call,
    output_content,
    parts_text,
    plain_copy,
    prompt_text,
    reasoning_thinking,
    tool_result,
)
from turnfold.formats.protocol import read_through
from turnfold.formats.source import (
    Source,
    folder_not_listed,
    join_warnings,
    once_a_folder,
    open_source,
    sibling_files,
    type_of_record,
    warning_count,
)
from turnfold.formats.wording import failure, stop, worded
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    Thinking,
    ThinkingForm,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
    Wording,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.usage import TOKEN_FIELDS, carries, counts_of

NAME = "codex"
#: What Codex keeps its secrets in, in its folder (``~/.codex``, ``$CODEX_HOME``): the API key
#: and ChatGPT login's tokens (``auth.json``) and the MCP servers' OAuth tokens where no keyring
#: is (``.credentials.json``); both names are in the ``codex`` binary of ``@openai/codex``.
#: ``$CODEX_HOME`` names the folder under any name (``find_codex_home``, openai/codex
#: ``codex-rs/rmcp-client/src/find_codex_home.rs``). Beside them, of it and of a project's
#: ``.codex``: ``config.toml``, whose MCP servers keep their ``env``, ``http_headers`` and
#: ``bearer_token`` (``RawMcpServerConfig``; ``codex mcp add --env`` writes the value there) and
#: whose model providers their ``experimental_bearer_token`` and ``http_headers``
#: (``ModelProviderInfo``; both in the ``codex`` binary 0.171.0), and ``.env``, read for keys at
#: start (``load_dotenv``, ``codex-rs/arg0/src/lib.rs``).
#: The machine's layers, ``/etc/codex/config.toml`` and the legacy ``managed_config.toml``
#: (in the ``codex`` binary 0.171.0, ``config/src/config_toml.rs``), are configs of the same
#: shape; ``requirements.toml`` beside them only constrains values, no secret. Named by their
#: last names, so a machine's root mounted elsewhere (an image, a container's) is covered.
#: Codex writes ``config.toml`` through ``write_atomically`` (openai/codex
#: ``codex-rs/core/src/config/edit.rs``): a ``tempfile::NamedTempFile::new_in`` copy beside it,
#: ``.tmp`` and six random characters, naming no file, which an interrupted write leaves
#: holding the file's secrets (``nameless_copies``).
CREDENTIALS = Credentials(
    folders=frozenset({".codex"}),
    files=frozenset({"auth.json", ".credentials.json", "config.toml", ".env"}),
    variables=frozenset({"CODEX_HOME"}),
    anywhere=frozenset({"etc/codex/config.toml", "etc/codex/managed_config.toml"}),
    nameless_copies=True,
)

ENVELOPE_TYPES = NameSet(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)
SILENT_RECORDS = NameSet(
    {
        "world_state", "inter_agent_communication_metadata", "token_usage_record",
        "security_risk_score",
    }
)  # fmt: skip
_NOTICE_EVENTS: dict[str, Literal["info", "warning"]] = {
    "warning": "warning",
    "stream_error": "warning",
    "deprecation_notice": "warning",
    "background_event": "info",
}

_STREAMING = "a streamed fragment of an item the rollout also records whole"
_BEGIN_EVENT = "the start of a call; its end event and response items carry the outcome"
_APPROVAL = "a question to the user; the call's own output records what was decided"
_UI_ECHO = "a UI copy of an item already read as a response_item"
_SETUP = "session set-up or UI bookkeeping, nothing the agent did"
_IGNORED_EVENTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "agent_message_delta", "agent_message_content_delta", "agent_reasoning_delta",
            "agent_reasoning_raw_content_delta", "agent_reasoning_section_break", "plan_delta",
            "reasoning_content_delta", "reasoning_raw_content_delta", "exec_command_output_delta",
            "terminal_interaction",
        ),
        _STREAMING,
    ),
    **dict.fromkeys(
        (
            "exec_command_begin", "patch_apply_begin", "mcp_tool_call_begin", "web_search_begin",
            "image_generation_begin", "collab_agent_spawn_begin", "collab_agent_interaction_begin",
            "collab_waiting_begin", "collab_close_begin", "dynamic_tool_call_request",
            "undo_started",
        ),
        _BEGIN_EVENT,
    ),
    **dict.fromkeys(
        (
            "exec_approval_request", "apply_patch_approval_request", "request_user_input",
            "elicitation_request", "guardian_assessment",
        ),
        _APPROVAL,
    ),
    **dict.fromkeys(
        (
            "web_search_end", "image_generation_end", "view_image_tool_call", "item_started",
            "raw_response_item", "collab_agent_interaction_end",
            "collab_waiting_end", "collab_close_end", "turn_diff", "plan_update",
        ),
        _UI_ECHO,
    ),
    **dict.fromkeys(
        (
            "session_configured", "mcp_startup_update",
            "mcp_startup_complete", "shutdown_complete", "get_history_entry_response",
            "mcp_list_tools_response", "list_custom_prompts_response", "list_skills_response",
            "model_reroute",
        ),
        _SETUP,
    ),
}  # fmt: skip
#: Events that are UI bookkeeping or echo an item this loader already reads.
SILENT_EVENTS = NameSet(_IGNORED_EVENTS)

#: Every record type this loader knows (issue 11): what it becomes, or why it is left out.
RECORDS = Records(
    mapped={
        "session_meta": "session metadata (a child thread's also names its parent); a later one"
        " marks a resume or fork",
        "turn_context": "the model and working directory of the turn's responses",
        "compacted": "compaction boundary with its summary",
        "inter_agent_communication": "inter-agent mail of older builds: one row in the turn"
        " (from → to)",
        "(legacy header)": "session metadata of an envelope-less rollout",
        "response_item/message": "user prompt or assistant text; injected context left out",
        "response_item/reasoning": "thinking (summary, raw text or encrypted)",
        "response_item/function_call": "tool call (MCP namespaces kept in the name)",
        "response_item/custom_tool_call": "tool call; a code-mode `exec` nests the calls its"
        " script made",
        "response_item/local_shell_call": "shell tool call",
        "response_item/tool_search_call": "tool-search call",
        "response_item/web_search_call": "web search call with its outcome",
        "response_item/image_generation_call": "image generation call with its image",
        "response_item/mcp_call": "hosted MCP call with its outcome",
        "response_item/mcp_approval_request": "hosted MCP call awaiting approval (confirming)",
        "response_item/mcp_approval_response": "the decision on it: a denial cancels the call, an"
        " approval leaves it to the mcp_call that follows",
        "response_item/file_search_call": "file search call with its results",
        "response_item/code_interpreter_call": "code interpreter call with its logs",
        "response_item/computer_call": "computer-use call",
        "response_item/function_call_output": "the result of its call; status from what it says",
        "response_item/custom_tool_call_output": "the result of its call; status from what it"
        " says; a code-mode `notify()` output, one more for its `exec` call, joins the cell's"
        " output",
        "response_item/local_shell_call_output": "the result of its shell call",
        "response_item/tool_search_output": "the result of its tool search",
        "response_item/computer_call_output": "the result of its computer-use call",
        "response_item/compaction": "compaction boundary (remote, encrypted)",
        "response_item/compaction_summary": "compaction boundary (remote, encrypted)",
        "response_item/context_compaction": "compaction boundary (server-side, encrypted)",
        "response_item/agent_message": "inter-agent mail: one row in the turn (from → to)",
        "event_msg/user_message": "user prompt (once, with the response_item copy)",
        "event_msg/agent_message": "assistant text when no response_item copies it",
        "event_msg/agent_reasoning": "thinking when no response_item copies it",
        "event_msg/agent_reasoning_raw_content": "raw thinking when no response_item copies it",
        "event_msg/token_count": "usage of the response; the session's total usage",
        "event_msg/task_started": "start of a turn",
        "event_msg/turn_started": "start of a turn",
        "event_msg/task_complete": "end of a turn: its recorded duration, or its error",
        "event_msg/turn_complete": "end of a turn: its recorded duration, or its error",
        "event_msg/turn_aborted": "abort marker; the turn's unfinished calls cancelled",
        "event_msg/context_compacted": "compaction boundary (one with a `compacted` beside it)",
        "event_msg/error": "assistant error",
        "event_msg/exec_command_end": "exit code, duration and output of its command call"
        " (a process it left running too), or a code-mode command nested in its `exec`",
        "event_msg/patch_apply_end": "outcome and unified diff of its patch call",
        "event_msg/item_completed": "a `FileChange`: outcome and unified diff of its patch call;"
        " a `CommandExecution`: exit code and duration of its command call (a process it left"
        " running too), or a code-mode command nested in its `exec`; an `McpToolCall` or"
        " `DynamicToolCall`: outcome, error and duration of its call; a `Plan`: the proposed"
        " plan (shown in the reply that wrote it); other items echo records already read",
        "event_msg/mcp_tool_call_end": "outcome of its MCP call; a code-mode call nested in"
        " its `exec`",
        "event_msg/dynamic_tool_call_response": "outcome of its dynamic tool call",
        "event_msg/collab_agent_spawn_end": "thread id, name and outcome of a spawned agent",
        "event_msg/sub_agent_activity": "thread id and path of a spawned agent",
        "event_msg/thread_name_updated": "session title",
        "event_msg/thread_goal_updated": "the goal in metadata; a notice when its objective or"
        " status changes",
        "event_msg/thread_settings_applied": "the model of the responses that follow",
        "event_msg/entered_review_mode": "notice naming what the review covers",
        "event_msg/exited_review_mode": "the review's answer, unless the answer that follows"
        " repeats it",
        "event_msg/thread_rolled_back": "notice",
        "event_msg/undo_completed": "notice",
        "event_msg/warning": "warning notice",
        "event_msg/stream_error": "warning notice",
        "event_msg/deprecation_notice": "warning notice",
        "event_msg/background_event": "notice",
    },
    ignored={
        "world_state": "the harness's baseline of context files, not a step of the agent",
        "inter_agent_communication_metadata": "delivery bookkeeping of inter-agent mail (does it"
        " start a turn); the mail itself is its own record",
        "security_risk_score": "a safety classifier's scores, kept out of the thread's view by"
        " Codex itself",
        "token_usage_record": "billing bookkeeping; event_msg/token_count carries the usage",
        "record_type/state": "legacy resume bookkeeping",
        "response_item/ghost_snapshot": "an undo checkpoint (a git commit id), nothing shown",
        "response_item/item_reference": "a reference to an item already read",
        "response_item/mcp_list_tools": "the tools an MCP server offered",
        **{f"event_msg/{kind}": why for kind, why in _IGNORED_EVENTS.items()},
    },
)

#: Tags Codex wraps injected context in (user- or developer-role messages, never prompts).
_CONTEXT_TAGS = NameSet(
    {
        "environment_context", "user_instructions", "permissions instructions", "INSTRUCTIONS",
        "turn_aborted", "subagent_notification", "skill", "collaboration_mode", "model_switch",
        "personality_spec", "apps_instructions", "plugins_instructions", "skills_instructions",
        "recommended_plugins", "goal_context", "hook_prompt", "context_window",
        "context_window_guidance", "token_budget", "rollout_budget", "additional_context",
        "internal_model_context", "multi_agent_mode", "environments_instructions", "tools",
    }
)  # fmt: skip
_AGENTS_MD = "# AGENTS.md instructions"
_IDE_CONTEXT = "# Context from my IDE setup:"
_IDE_REQUEST = "## My request for Codex:"
_SPAWN_TOOLS = NameSet({"spawn_agent"})
#: Codex's own multi-agent tools (v1 ``multi_agent_v1``, v2 ``collaboration`` namespaces): Codex
#: answers them itself, with their result or a message saying why they failed (issue 21.7).
_AGENT_TOOLS = NameSet(
    {
        "spawn_agent", "wait_agent", "send_message", "list_agents", "followup_task", "wait",
        "close_agent", "send_input", "resume_agent",
    }
)  # fmt: skip
_FAILED_AGENT = NameSet({"not_found", "errored", "error", "failed"})
_FINISHED = NameSet({"success", "error", "cancelled"})
#: ``FileChange.status`` values of a patch that ended ("inProgress" has not): only
#: ``completed`` applied it (``declined``: the user refused it).
_FILE_CHANGE_ENDED = frozenset({"completed", "failed", "declined"})
#: The ``status`` of a finished ``McpToolCall`` / ``DynamicToolCall`` item (items.rs:
#: ``completed`` / ``failed``; ``inProgress`` / ``in_progress`` has not finished).
_ITEM_STATUS: dict[str, ToolStatus] = {"completed": "success", "failed": "error"}
#: Plan mode's plan inside a reply (codex-rs/utils/stream-parser ``proposed_plan.rs``: the block
#: runs to its closing tag, or to the end of an unterminated reply).
_PLAN_BLOCK = re.compile(r"<proposed_plan>(.*?)(?:</proposed_plan>|\Z)", re.DOTALL)
_PLAN_HEADING = "**Proposed plan**"
_CAMEL_BREAK = re.compile(r"(?<=[a-z])(?=[A-Z])")  # budgetLimited → budget Limited
_PATCH_TOOL = "apply_patch"
_PLAN_TOOL = "update_plan"
#: What ``update_plan`` answers when it took the plan (codex-rs ``tools/handlers/plan.rs``).
_PLAN_UPDATED = "Plan updated"
#: Code mode: one custom (freeform) tool whose input is a JavaScript script calling the tools,
#: the same in 0.144 and 0.171 (``codex_code_mode::PUBLIC_TOOL_NAME``; the tool 0.144.0 offers
#: the model: ``{"type": "custom", "name": "exec"}``, a lark grammar of an optional
#: ``// @exec: {"yield_time_ms", "max_output_tokens"}`` line and the source).
_CODE_MODE_TOOL = "exec"
#: That optional first line of a script: settings, not what it does.
_CELL_PRAGMA = re.compile(r"[ \t]*// @exec:")
#: Code mode's other tool (``codex_code_mode::WAIT_TOOL_NAME``): it waits on an ``exec`` cell
#: that yielded (``Script running with cell ID 8``) and returns its further output, so its call
#: is named as the script's (``exec wait``, a command): not the ``wait`` of the first
#: multi-agent tools, which waited on agent ``ids`` and is now ``wait_agent``.
_CODE_MODE_WAIT = "wait"
_CELL_WAIT = "exec wait"
#: How a code-mode cell's answer (``exec``'s, or a ``wait``'s on it) begins, as Codex 0.171
#: writes it: ``Script completed``, ``Script running with cell ID 1`` (yielded: the ``wait``
#: tells), and these two, which settle the script whatever it printed: it threw (the answer
#: ends in ``Script error:`` and the stack), or a ``wait`` with ``terminate`` stopped it.
_CELL_COMPLETED = "Script completed"
_CELL_FAILED = "Script failed"
_CELL_TERMINATED = "Script terminated"
_CELL_ENDED = (_CELL_COMPLETED, _CELL_FAILED, _CELL_TERMINATED)
_CELL_RUNNING = re.compile(r"Script running with cell ID (\S+)")
#: What a yielded cell's meta says while no answer has ended its script.
_RUNNING_MARKS = frozenset({"still_running", "running_at_turn_end"})
#: Unified exec's other tool: it types ``chars`` into a process an ``exec_command`` left
#: running (its output's header says ``Process running with session ID 20075``), or with no
#: ``chars`` polls it, and answers with what the process printed since (the header says whether
#: it still runs or its exit code). A part of running that command, described by it.
_STDIN_TOOL = "write_stdin"
_RUNNING_SESSION = re.compile(r"^Process running with session ID (\d+)", re.MULTILINE)
_MAIL_TOOL = "agent_message"  # the row inter-agent mail becomes (issue 21.8)

_HEADER_START = (
    "Exit code: ", "Command: ", "Chunk ID: ", "Wall time: ", "Process exited with code ",
    "Process running with session ID ",
)  # fmt: skip
_HEADER_LIMIT = 4096  # a header is a few short lines; never scan a large output for one
_EXIT_CODE = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)", re.MULTILINE)
_HEADER_LINE = re.compile(
    r"(?:Exit code|Wall time|Duration|Chunk ID|Command|Original token count): "
    r"|Process exited with code |Process running with session ID "
)
_WALL_TIME = re.compile(r"^(?:Wall time|Duration): ([0-9]+(?:\.[0-9]+)?) seconds", re.MULTILINE)
_SHELL_COMMAND = re.compile(r"<command>\n?(.*?)\n?</command>", re.DOTALL)
_SHELL_RESULT = re.compile(r"<result>\n?(.*)</result>", re.DOTALL)
_IMAGE_PLACEHOLDER = re.compile(r"\[Image #\d+\]")
#: What a plain-text result says when its call failed (issue 11.6): one rule, on its first line.
_STATED_EXIT = re.compile(r"\bexit[ _]code\W{0,3}(-?\d+)", re.IGNORECASE)
_STATED_FAILURE = re.compile(
    r"\b(?:rejected|verification failed|timed out|failed in sandbox)\b|\bfailed:"
    # Codex's own messages at the start: an ``apply_patch`` run through ``shell`` that does not
    # apply (``error: {parse_error:#}``), a failed MCP call (``tool call error:``), a command
    # that could not be run at all (``execution error: {err}``, a missing ``workdir`` say).
    r"|^(?:tool call |execution )?error: ",
    re.IGNORECASE,
)
_FAILURE_SCAN = 400
#: Codex's stand-in outputs for a call cut off by an interrupt (Codex 0.171 writes the second).
_ABORTED = frozenset({"aborted", "aborted by user", "command aborted by user"})
#: The stand-in of a call that is not a shell command (``exec_command`` of 0.100, MCP, patch,
#: agent tools…): codex-rs/core/src/tools/parallel.rs ``abort_message``,
#: ``format!("aborted by user after {secs:.1}s")``.
_ABORTED_AFTER = re.compile(r"aborted by user after (\d+(?:\.\d+)?)s")
#: What Codex's ``Session::record_model_warning`` wrote as a user-role ``Warning: …`` message
#: (rollouts made with Codex CLI 0.72.0 to 0.100.0 have them; Codex's source says newer builds
#: write them no more). Codex tells them from prompts by these texts itself: the
#: ``Legacy…Warning`` fragments of
#: codex-rs/core/src/context/contextual_user_message.rs (apply_patch run through a shell tool,
#: too many unified exec processes open, a request re-routed to another model).
_WARNING_STARTS = (
    "Warning: The maximum number of unified exec processes you can keep open is",
    "Warning: Your account was flagged for potentially high-risk cyber activity",
)
_PATCH_WARNING = (
    "Warning: apply_patch was requested via ",
    "Use the apply_patch tool instead of exec_command.",
)
#: What a code-mode script printed of the commands it ran: ``exit_code: 1`` (issue 21.2).
_PRINTED_EXIT = re.compile(
    r"""(?:["']?exit_?code["']?\s*[:=]\s*|^Exit code: |^Process exited with code )(-?\d+)""",
    re.IGNORECASE | re.MULTILINE,
)
_PRINTED_SCAN = 65536
#: A command a script hands ``tools.exec_command``: the ``cmd`` of its object (a quoted key
#: is JavaScript too), or the string itself. Code mode's ``exec`` description says a nested
#: tool takes "either a string or an object", so models write both; Codex refuses the string
#: for a function tool (codex-rs ``core/src/tools/code_mode/mod.rs``,
#: ``serialize_function_tool_arguments``: "tool `exec_command` expects a JSON object for
#: arguments", 0.171), which the cell's answer shows; the cell still asked for that command.
_SCRIPT_COMMAND = re.compile(
    r"""tools\.exec_command\(\s*(?:\{[^{}]*?(?<![\w$])(?:cmd|"cmd"|'cmd')\s*:\s*)?"""
    r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)"""
)
_SCRIPT_TOOL = re.compile(r"\btools\.([A-Za-z_][\w$]*)\s*\(")
_SAFE_ID = re.compile(r"^[0-9A-Za-z_-]{1,80}$")  # a thread id is safe to put in a glob
_ECHO_WINDOW = 8
_MAX_SCANNED_FILES = 2000  # rollouts beside a parent whose first line is read to find its children
_HEADER_LINE_LIMIT = 4 * 1024 * 1024  # a session_meta line holds the base instructions


# --- output headers and injected context -------------------------------------------------------


@dataclass(frozen=True)
class ExecOutput:
    """A command's output with the header Codex puts before it taken apart."""

    body: str
    exit_code: int | None
    duration_ms: float | None
    header: str | None


def exec_output(text: str) -> ExecOutput | None:
    """The exit code, wall time and body of a Codex tool output, or None if it has no header.

    Unified exec writes ``Chunk ID`` / ``Wall time`` / ``Process exited with code`` / ``Original
    token count`` lines, then ``Output:`` and the body. An ``apply_patch`` it intercepts has no
    exit code there: its body is the patch tool's own shell-style output, a second header
    (``Exit code: 0``, ``Wall time``, ``Output:``) before the message, which is read too. An
    output cut off by an interrupt may have no ``Output:`` line: the header is its leading
    header lines, the rest (``aborted by user``) the body.

    >>> exec_output("Exit code: 2\\nWall time: 1.5 seconds\\nOutput:\\nboom").exit_code
    2
    >>> inner = exec_output("Wall time: 0 seconds\\nOutput:\\nExit code: 0\\nOutput:\\nDone")
    >>> inner.exit_code, inner.body
    (0, 'Done')
    """
    if text.startswith("{"):
        return _json_exec_output(text)
    outer = _header_and_body(text)
    if outer is None:
        return None
    header, body = outer
    inner = _header_and_body(body) if not _EXIT_CODE.search(header) else None
    if inner is not None:
        header, body = f"{header.rstrip()}\n{inner[0]}", inner[1]
    code = _EXIT_CODE.search(header)
    wall = _WALL_TIME.search(header)  # the outer (unified exec) wall time comes first
    return ExecOutput(
        body=body,
        exit_code=int(code.group(1)) if code else None,
        duration_ms=float(wall.group(1)) * 1000 if wall else None,
        header=header.rstrip("\n") or None,
    )


def _header_and_body(text: str) -> tuple[str, str] | None:
    """One header taken off ``text`` (up to its ``Output:`` line), or None if it has none."""
    if not text.startswith(_HEADER_START):
        return None
    marker = text.find("Output:\n", 0, _HEADER_LIMIT)
    while marker > 0 and text[marker - 1] != "\n":
        marker = text.find("Output:\n", marker + 1, _HEADER_LIMIT)
    if marker >= 0:
        return text[:marker], text[marker + len("Output:\n") :]
    if len(text) > _HEADER_LIMIT:
        return None
    lines = text.split("\n")
    count = next((i for i, line in enumerate(lines) if not _HEADER_LINE.match(line)), len(lines))
    return "\n".join(lines[:count]), "\n".join(lines[count:])


def _json_exec_output(text: str) -> ExecOutput | None:
    # {"output": "...", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}: the metadata is
    # the small last key, so only outputs ending in it are worth parsing.
    if '"metadata"' not in text[-200:]:
        return None
    try:
        value = codec.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return None
    metadata = value.get("metadata")
    if not isinstance(metadata, dict):
        return None
    seconds = metadata.get("duration_seconds")
    duration = seconds * 1000 if isinstance(seconds, (int, float)) and seconds >= 0 else None
    return ExecOutput(value["output"], as_int(metadata.get("exit_code")), duration, None)


def states_failure(text: str) -> bool:
    """Whether a plain-text result says its call failed: a non-zero exit code, a rejection, a
    failed verification, a time-out (spec L-3, issue 11.6). The one place of that rule: only
    the first line is read, where Codex puts its own failure messages.

    >>> states_failure("failed in sandbox LinuxSeccomp with execution error: exit code: 2")
    True
    >>> states_failure("error: Failed to find expected lines ['x'] in /a.txt")
    True
    >>> states_failure("tool call error: tool call failed for `memory/add_observations`")
    True
    >>> states_failure("Exit code: 0 and all is well"), states_failure("a.txt\\nb.txt")
    (False, False)
    """
    head = text.lstrip()[:_FAILURE_SCAN].split("\n", 1)[0]
    code = _STATED_EXIT.search(head)
    if code is not None:
        return int(code.group(1)) != 0
    return _STATED_FAILURE.search(head) is not None


def was_aborted(text: str) -> bool:
    """Whether an output (its header taken off) is what Codex writes for a call an interrupt
    cut off: ``aborted`` (older), ``aborted by user`` (unified exec, after a ``Wall time``
    line), the partial output ending in ``command aborted by user`` (shell, unified exec), or
    ``aborted by user after 7.6s`` (any other tool).

    >>> was_aborted("aborted by user"), was_aborted("partial\\ncommand aborted by user")
    (True, True)
    >>> was_aborted("aborted by user after 7.6s")  # a tool that is not a shell command
    True
    >>> was_aborted("the job was aborted by user request")
    False
    """
    body = text.strip()
    return (
        body in _ABORTED
        or body.endswith("\ncommand aborted by user")
        or aborted_after_ms(body) is not None
    )


def aborted_after_ms(text: str) -> float | None:
    """How long a call ran before an interrupt cut it off, as its ``aborted by user after
    7.6s`` output says (the only time such a call records).

    >>> aborted_after_ms("aborted by user after 7.6s"), aborted_after_ms("aborted by user")
    (7600.0, None)
    """
    after = _ABORTED_AFTER.fullmatch(text.strip())
    return float(after.group(1)) * 1000 if after is not None else None


def printed_status(text: str) -> ToolStatus | None:
    """A code-mode script's status from the exit codes it printed: ``error`` if one is not 0,
    ``success`` if all are, None if it printed none.

    >>> printed_status('{"exit_code": 0}\\nexit_code: 1'), printed_status("done")
    ('error', None)
    """
    codes = [int(m.group(1)) for m in _PRINTED_EXIT.finditer(text[:_PRINTED_SCAN])]
    if not codes:
        return None
    return "success" if all(code == 0 for code in codes) else "error"


def script_outcome(printed: ToolStatus | None, ended: ToolStatus) -> ToolStatus:
    """A yielded cell's outcome: ``ended`` is what the answer that ended its script says
    (read as ``exec``'s), ``printed`` what the script printed of exit codes in its earlier
    answers. A stop (``Script terminated``) settles it whatever it printed; a failure printed
    at any time fails it; exit codes that were all 0 make it a success when the end says
    nothing more.

    >>> script_outcome("error", "success"), script_outcome("success", "unknown")
    ('error', 'success')
    >>> script_outcome("error", "cancelled"), script_outcome(None, "unknown")
    ('cancelled', 'unknown')
    """
    if ended == "cancelled" or printed is None:
        return ended
    if printed == "error" or ended == "error":
        return "error"
    return "success" if ended == "unknown" else ended


def script_commands(script: str) -> list[str]:
    """The commands a code-mode script passes ``tools.exec_command``, in order: the ``cmd``
    of an object, or a plain string.

    >>> script_commands('await tools.exec_command("ls -a");\\n'
    ...                 "tools.exec_command({yield_time_ms: 5, 'cmd': 'make'}); "
    ...                 "tools.exec_command(`git  status`); tools.exec_command({cmd: c})")
    ['ls -a', 'make', 'git status']
    """
    commands = []
    for match in _SCRIPT_COMMAND.finditer(script):
        literal = match.group(1)
        if literal[0] == '"':
            try:
                value = codec.loads(literal)
            except ValueError:
                value = literal[1:-1]
        else:
            value = literal[1:-1].replace("\\'", "'")
        if isinstance(value, str) and value.strip():
            commands.append(" ".join(value.split()))
    return commands


def _script_command_text(argv: list[Any]) -> str | None:
    """The command a script passed to ``tools.exec_command``, from the argv Codex ran it as
    (``["/bin/bash", "-lc", cmd]``), spaced as :func:`script_commands` gives it."""
    if len(argv) == 3 and argv[1] in ("-c", "-lc") and isinstance(argv[2], str):
        return " ".join(argv[2].split())
    return None


def script_description(script: str) -> str | None:
    """What a code-mode script ran: its commands, else the tools it called, else (a script
    that calls none: it prints, stores or throws) its first line of code, as a command is
    described by its first line; the ``// @exec:`` settings line is no code.

    >>> script_description('// @exec: {"yield_time_ms": 1000}\\ntext("TF");\\nthrow "x";')
    'text("TF");'
    """
    commands = script_commands(script)
    if commands:
        return "; ".join(commands)
    tools = list(dict.fromkeys(_SCRIPT_TOOL.findall(script)))
    if tools:
        return ", ".join(tools)
    lines = script.splitlines()
    if lines and _CELL_PRAGMA.match(lines[0]):
        lines = lines[1:]
    return describe_args(_CODE_MODE_TOOL, "\n".join(lines))


def mcp_name(namespace: str, name: str) -> str:
    """An MCP call's name with its server kept, ``mcp__<server>__<tool>`` (issue 21.12): the
    namespace ``mcp__codex_apps__github`` and the name ``_fetch_pr`` give
    ``mcp__codex_apps__github__fetch_pr``.

    >>> mcp_name("mcp__codex_apps__github", "_fetch_pr")
    'mcp__codex_apps__github__fetch_pr'
    """
    return f"{namespace.rstrip('_')}__{name.lstrip('_')}"


def is_injected_context(text: str) -> bool:
    """Whether a user-role message is context Codex injected rather than something typed."""
    stripped = text.strip()
    if stripped.startswith(_AGENTS_MD) or model_warning(stripped):
        return True
    if not stripped.startswith("<"):
        return False
    end = stripped.find(">", 1, 120)
    if end < 0:
        return False
    tag = stripped[1:end]
    name = tag.split(" ", 1)[0]
    if tag in _CONTEXT_TAGS or name in _CONTEXT_TAGS:
        return True
    # Newer fragments follow the same <snake_case>…</snake_case> shape; a typed prompt that is
    # one such element and nothing else is the (accepted) false positive.
    return "_" in name and stripped.endswith(f"</{name}>")


def model_warning(text: str) -> bool:
    """Whether a user-role message is a warning Codex gave the model, not the user's words.

    >>> model_warning("Warning: apply_patch was requested via shell. Use the apply_patch tool"
    ...               " instead of exec_command.")
    True
    >>> model_warning("Warning: the tests are flaky, look at them first")
    False
    """
    stripped = text.strip()
    start, end = _PATCH_WARNING
    if stripped.startswith(start) and stripped.endswith(end):
        return True
    return stripped.startswith(_WARNING_STARTS)


def user_shell_command(text: str) -> tuple[str, str] | None:
    """``(command, result)`` of a ``<user_shell_command>`` record, or None."""
    stripped = text.strip()
    if not stripped.startswith("<user_shell_command>"):
        return None
    command = _SHELL_COMMAND.search(stripped)
    result = _SHELL_RESULT.search(stripped)
    return (
        command.group(1).strip() if command else "",
        result.group(1) if result else "",
    )


def user_shell_call(
    command: str, result: str, call_id: str, timestamp: str | None, cwd: str | None
) -> ToolCall:
    """The user-initiated ``shell`` call (spec F-14) a ``<user_shell_command>`` shows, its
    ``(command, result)`` read by :func:`user_shell_command`: the result's ``Exit code`` and
    ``Duration`` header give its status and duration, its ``Output`` the call's result."""
    facts = exec_output(result.strip("\n") + "\n")
    args = {"command": command}
    status: ToolStatus = "unknown"
    meta: dict[str, Any] = {}
    if facts is not None and facts.exit_code is not None:
        status = "success" if facts.exit_code == 0 else "error"
        meta["exit_code"] = facts.exit_code
    body = facts.body if facts is not None else result
    return ToolCall(
        call_id=call_id,
        name="shell",
        args=args,
        description=describe_args("shell", args, cwd),
        status=status,
        result=text_result(body.rstrip("\n") or None),
        started_at=timestamp,
        timestamp=timestamp,
        duration_ms=facts.duration_ms if facts is not None else None,
        user_initiated=True,
        meta=meta,
    )


def _echo_key(text: str) -> str:
    """Text compared across the item and event copies of one message."""
    if "[Image #" in text:
        text = _IMAGE_PLACEHOLDER.sub("", text)
    return " ".join(text.split())


def plan_sections(text: str) -> tuple[str, str, list[str]]:
    """A plan-mode reply as shown, as Codex says it, and its plans: each ``<proposed_plan>``
    block becomes a *Proposed plan* section in its place (a rule after it when the reply goes
    on); what Codex says is the reply without its blocks (its ``agent_message`` event).

    >>> shown, said, plans = plan_sections(
    ...     "Looked.\\n<proposed_plan>\\n1. Fix\\n</proposed_plan>\\nGo ahead?"
    ... )
    >>> print(shown)
    Looked.
    <BLANKLINE>
    **Proposed plan**
    <BLANKLINE>
    1. Fix
    <BLANKLINE>
    ---
    <BLANKLINE>
    Go ahead?
    >>> said, plans
    ('Looked.\\n\\nGo ahead?', ['1. Fix'])
    """
    pieces: list[tuple[bool, str]] = []  # (is a plan, its text), in the reply's order
    end = 0
    for match in _PLAN_BLOCK.finditer(text):
        pieces += [(False, text[end : match.start()]), (True, match.group(1).strip("\n"))]
        end = match.end()
    pieces.append((False, text[end:]))
    shown: list[str] = []
    after_plan = False
    for is_plan, body in pieces:
        if not body.strip():
            continue
        if is_plan:
            shown.append(f"{_PLAN_HEADING}\n\n{body}")
        else:
            shown += ["---", body.strip("\n")] if after_plan else [body.strip("\n")]
        after_plan = is_plan
    plans = [body for is_plan, body in pieces if is_plan and body.strip()]
    return "\n\n".join(shown), _PLAN_BLOCK.sub("", text), plans


def _shrank(total: Usage, before: Usage) -> bool:
    """Whether a cumulative total fell below the previous one (the count started again)."""
    return any((getattr(total, n) or 0) < (getattr(before, n) or 0) for n in TOKEN_FIELDS)


def _difference(total: Usage, before: Usage) -> Usage | None:
    """What a cumulative total added since the previous one; None if it did not grow."""
    counts: dict[str, Any] = {
        name: max(now - (getattr(before, name) or 0), 0)
        for name in TOKEN_FIELDS
        if isinstance(now := getattr(total, name), int)
    }
    return Usage(**counts) if any(counts.values()) else None


def codex_usage(usage: Any) -> Usage | None:
    """A Codex ``*_token_usage`` object as :class:`Usage`."""
    return usage_from(
        usage,
        input_tokens="input_tokens",
        output_tokens="output_tokens",
        cache_read_tokens="cached_input_tokens",
        cache_write_tokens="cache_write_input_tokens",
        reasoning_tokens="reasoning_output_tokens",
    )


def _duration_ms(value: Any) -> float | None:
    """``{"secs": 1, "nanos": 5e8}`` as milliseconds."""
    if not isinstance(value, Mapping):
        return None
    secs, nanos = value.get("secs"), value.get("nanos")
    if not isinstance(secs, (int, float)) or not isinstance(nanos, (int, float)):
        return None
    return secs * 1000 + nanos / 1e6 if secs >= 0 and nanos >= 0 else None


def changes_diff(changes: Any, cwd: str | None = None) -> str | None:
    """``patch_apply_end.changes`` as one unified diff (both of Codex's encodings); Codex keys
    the files by absolute path: those under ``cwd`` are named relative to it, as git would."""
    if not isinstance(changes, Mapping):
        return None
    parts: list[str] = []
    for path, change in changes.items():
        if not isinstance(change, Mapping):
            continue
        kind = change.get("type")
        if kind is None and len(change) == 1:  # older: {"update": {...}}
            kind, change = next(iter(change.items()))
            change = change if isinstance(change, Mapping) else {}
        parts.append(_file_diff(str(path), str(kind), change, cwd))
    text = "".join(p for p in parts if p)
    return text or None


def _file_diff(path: str, kind: str, change: Mapping[str, Any], cwd: str | None) -> str:
    old = _diff_name("a", path, cwd)
    if kind == "update":
        diff = change.get("unified_diff")
        if not isinstance(diff, str) or not diff:
            return ""
        moved = change.get("move_path")
        target = moved if isinstance(moved, str) else path
        head = "" if diff.startswith("---") else f"--- {old}\n+++ {_diff_name('b', target, cwd)}\n"
        return head + diff + ("" if diff.endswith("\n") else "\n")
    content = change.get("content")
    if kind not in ("add", "delete") or not isinstance(content, str):
        return ""
    sign, head = (
        ("+", f"--- /dev/null\n+++ {_diff_name('b', path, cwd)}\n")
        if kind == "add"
        else ("-", f"--- {old}\n+++ /dev/null\n")
    )
    return head + "".join(f"{sign}{line}\n" for line in content.splitlines())


def _diff_name(side: str, path: str, cwd: str | None) -> str:
    """A diff header's file name: ``a/notes.txt`` for a path under ``cwd``; an absolute path
    outside it as it is (``a//etc/hosts`` would read as neither)."""
    named = relative(path, cwd)
    return named if named.startswith("/") else f"{side}/{named}"


class _Echoes:
    """Messages Codex writes twice (a ``response_item`` and a UI event): the copy is dropped.

    Each origin (``item`` / ``event``) keeps a short window of keys waiting for their twin;
    the order of the two copies varies between Codex versions.
    """

    def __init__(self) -> None:
        self.item: list[tuple[str, Entry]] = []
        self.event: list[tuple[str, Entry]] = []

    def _others(self, origin: str) -> list[tuple[str, Entry]]:
        return self.event if origin == "item" else self.item

    def take(self, origin: str, key: str) -> Entry | None:
        """The entry of the other origin with ``key`` (consumed), or None."""
        others = self._others(origin)
        for index, (waiting, entry) in enumerate(others):
            if waiting == key:
                del others[index]
                return entry
        return None

    def take_all(self, origin: str, keys: list[str]) -> bool:
        """Consume one waiting twin per key, only if every key has one."""
        others = self._others(origin)
        remaining = list(others)
        for key in keys:
            index = next((i for i, (waiting, _) in enumerate(remaining) if waiting == key), None)
            if index is None:
                return False
            del remaining[index]
        others[:] = remaining
        return True

    def remember(self, origin: str, key: str, entry: Entry) -> None:
        mine = self.item if origin == "item" else self.event
        mine.append((key, entry))
        if len(mine) > _ECHO_WINDOW:
            del mine[0]

    def clear(self) -> None:
        if self.item:
            self.item.clear()
        if self.event:
            self.event.clear()


@dataclass(frozen=True)
class ThreadHeader:
    """What a rollout's first line says of its thread."""

    thread_id: str | None
    parent_id: str | None
    nickname: str | None


def thread_header(path: Path) -> ThreadHeader | None:
    """The ``session_meta`` of a rollout file's first line, None if it has none."""
    try:
        with path.open("rb") as stream:
            first = stream.readline(_HEADER_LINE_LIMIT)
        record = codec.loads(first)
    except (OSError, ValueError):
        return None
    payload = record.get("payload") if isinstance(record, dict) else None
    if not isinstance(payload, dict) or record.get("type") != "session_meta":
        return None
    source = payload.get("source")
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    spawn = spawn if isinstance(spawn, dict) else {}
    return ThreadHeader(
        thread_id=_first_str(payload, ("id", "session_id")),
        parent_id=_first_str(spawn, ("parent_thread_id",))
        or _first_str(payload, ("parent_thread_id",)),
        nickname=_first_str(spawn, ("agent_nickname",)) or _first_str(payload, ("agent_nickname",)),
    )


class _ChildThreads:
    """Finds a spawned thread's rollout by the ids in the records, whatever the file names
    (issue 21.1): ``*<thread id>.jsonl`` beside the parent or anywhere in the
    ``sessions/YYYY/MM/DD`` tree it lies in, else a file beside it whose ``session_meta``
    has that id, or names this session as its parent (matched by nickname, then in order).
    A folder looked in that cannot be listed is said through ``warn``, once."""

    def __init__(self, path: Path, session_id: Any, warn: Callable[[str], None]) -> None:
        self.path = path
        self.session_id = session_id if isinstance(session_id, str) else None
        self._headers: dict[Path, ThreadHeader] | None = None
        self._used: set[Path] = set()
        self._unlisted = once_a_folder(
            lambda folder, error: warn(
                folder_not_listed(folder, error, "child threads' rollouts (*.jsonl)")
            )
        )

    def find(self, thread_id: str | None, nickname: str | None) -> Path | None:
        found = self._by_name(thread_id) if thread_id else None
        if found is None:
            found = self._by_header(thread_id, nickname)
        if found is not None:
            self._used.add(found)
        return found

    def _by_name(self, thread_id: str) -> Path | None:
        if not _SAFE_ID.match(thread_id):
            return None
        folder = self.path.parent
        names = sibling_files(folder, f"*{thread_id}.jsonl", self._unlisted)
        names = [p for p in names if p != self.path]
        day = folder.parts[-3:]
        if not names and len(folder.parts) > 4 and all(part.isdigit() for part in day):
            root = folder.parents[2]  # .../sessions/YYYY/MM/DD → .../sessions
            names = sibling_files(root, f"*/*/*/*{thread_id}.jsonl", self._unlisted)
        names = [p for p in names if p not in self._used]
        return names[0] if names else None

    def _by_header(self, thread_id: str | None, nickname: str | None) -> Path | None:
        if self._headers is None:
            files = sibling_files(self.path.parent, "*.jsonl", self._unlisted)
            files = [p for p in files if p != self.path]
            self._headers = {}
            for file in files[:_MAX_SCANNED_FILES]:
                header = thread_header(file)
                if header is not None:
                    self._headers[file] = header
        free = [(p, h) for p, h in self._headers.items() if p not in self._used]
        if thread_id:
            return next((p for p, h in free if h.thread_id == thread_id), None)
        children = [(p, h) for p, h in free if self.session_id and h.parent_id == self.session_id]
        named = [p for p, h in children if nickname and h.nickname == nickname]
        return named[0] if named else (children[0][0] if children else None)


# --- the builder ---------------------------------------------------------------------------------

PayloadHandler = Callable[[Mapping[str, Any], int, "str | None"], None]


class CodexBuilder(ResponsesBuilder):
    """Builds a transcript from rollout records fed one at a time (see the module docstring)."""

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<rollout>",
        *,
        cwd: str | None = None,
        live: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, cwd=cwd, live=live)
        self._handlers.update(
            agent_message=self._inter_agent,
            ghost_snapshot=_skip,
            # models.rs ``ResponseItem::ContextCompaction``: the encrypted summary the server
            # left when it compacted the context, kept beside ``Compaction`` wherever Codex
            # rebuilds a history (compact_remote.rs ``should_keep_compacted_history_item``).
            context_compaction=self._compaction,
        )
        self._records: dict[str, PayloadHandler] = {
            "response_item": self._response_item,
            "event_msg": self._event,
            "session_meta": self._session_meta,
            "turn_context": self._turn_context,
            "compacted": self._compacted,
            # Builds of June 2026 (upstream 64bdeed9f7) stored inter-agent mail only as this
            # record (protocol.rs ``InterAgentCommunication``); later ones write a
            # response_item/agent_message with the same author, recipient and content
            # (core/src/session ``record_inter_agent_communication``).
            "inter_agent_communication": self._inter_agent,
        }
        self._events: dict[str, PayloadHandler] = {
            "user_message": self._user_event,
            "agent_message": self._agent_message_event,
            "agent_reasoning": self._reasoning_event,
            "agent_reasoning_raw_content": self._reasoning_event,
            "token_count": self._token_count,
            "task_started": self._task_started,
            "turn_started": self._task_started,
            "task_complete": self._task_complete,
            "turn_complete": self._task_complete,
            "turn_aborted": self._turn_aborted,
            "context_compacted": self._context_compacted,
            "error": self._error_event,
            "exec_command_end": self._exec_end,
            "patch_apply_end": self._patch_end,
            "item_completed": self._item_completed,
            "mcp_tool_call_end": self._mcp_end,
            "dynamic_tool_call_response": self._dynamic_end,
            "collab_agent_spawn_end": self._spawn_end,
            "sub_agent_activity": self._agent_activity,
            "thread_settings_applied": self._settings_applied,
            "thread_name_updated": self._thread_name,
            "thread_goal_updated": self._goal_updated,
            "entered_review_mode": self._review_started,
            "exited_review_mode": self._review_ended,
            "thread_rolled_back": self._rolled_back,
            "undo_completed": self._undo_completed,
            **dict.fromkeys(_NOTICE_EVENTS, self._notice_event),
            **dict.fromkeys(SILENT_EVENTS, _skip),
        }
        self._turn = 0
        self._turn_batches = 0
        self._turn_prompted = False  # the turn has its user prompt
        self._turn_busy = False  # entries other than the prompt were added in this turn
        self._turn_user: UserMessage | None = None
        self._turn_text: AssistantText | None = None
        self._turn_ended = False  # task_complete or turn_aborted closed the turn
        #: A call of this turn answered as an interrupt cut it off ("aborted by user"):
        #: the turn was interrupted, whether or not a turn_aborted follows (:meth:`_close_turn`).
        self._interrupted: ToolCall | None = None
        self._usage_text: AssistantText | None = None  # text of the response being counted
        self._usage_first: Entry | None = None  # its first entry, when it writes no text
        #: A response's usage recorded before any entry of it: older builds wrote its items
        #: after its token_count, so the first of them carries it.
        self._usage_waiting: Usage | None = None
        self._user_echoes = _Echoes()
        self._model_echoes = _Echoes()
        self._boundary: tuple[str, Entry] | None = None
        self._diffs: dict[str, str] = {}
        self._spawns: list[tuple[ToolCall, int]] = []  # spawn_agent calls, and their lines
        self._code_calls: list[ToolCall] = []  # this turn's code-mode exec calls
        self._inner: dict[str, Transcript] = {}  # code-mode calls nested under their exec
        self._sessions: dict[int, ToolCall] = {}  # processes left running, by session id
        self._cells: dict[str, ToolCall] = {}  # exec calls that yielded, uncollected, by cell
        self._cells_printed: dict[str, ToolStatus] = {}  # their exit codes printed so far
        #: Notifications recorded before their cell's answer, by call id: shown ahead of it.
        self._early_notes: dict[str, str] = {}
        self._response_first: Entry | None = None  # first entry of the model response
        self._review: tuple[str, str | None] | None = None  # answer of an ended review, waiting
        self._review_answers: set[str] = set()  # echo keys of answers the review also gave
        self._plan_mode = False  # the collaboration mode of the turn is Plan
        self._plans_waiting: list[tuple[str, str | None]] = []  # Plan items no reply showed yet
        self._plans_shown = 0  # plans replies of the turn showed before their Plan item came
        self._goal: tuple[str, str | None] | None = None  # objective and status last shown
        self._unknown: set[str] = set()
        self._session_seen = False
        self._bad_times = 0
        self._first_bad_time: int | None = None
        self._last_time: tuple[Any, str | None] = (None, None)
        self._total_usage: Usage | None = None  # the last cumulative total
        self._session_usage: dict[str, int] = {}  # the responses' usage added up
        self._durations: list[float] = []

    # --- records ---------------------------------------------------------------------------

    def feed(self, item: Mapping[str, Any], line: int) -> None:
        """Add one rollout line: an envelope, the legacy header, or a legacy bare item."""
        # JSON gives dicts; the exact check first keeps the per-line cost low (spec Q-1).
        if type(item) is not dict and not isinstance(item, Mapping):
            self.warn("not a JSON object", line)
            return
        kind = item.get("type")
        payload = item.get("payload")
        if type(payload) is dict or (payload is not None and isinstance(payload, Mapping)):
            self._envelope(kind, payload, self._time(item, line), line)
        elif "payload" in item:
            self.warn(f"{kind} record without a payload object", line)
        elif is_legacy_header(item):
            self.recognized += 1
            self._legacy_meta(item, line)
        elif "record_type" in item:
            self.recognized += 1  # legacy {"record_type": "state"} bookkeeping
        elif not self.feed_item(item, line, self._time(item, line)):
            self.warn(f"not a Codex rollout record (type {kind!r})", line)

    def _envelope(
        self, kind: Any, payload: Mapping[str, Any], timestamp: str | None, line: int
    ) -> None:
        if type(kind) is not str:
            self.warn(f"record with a payload but no type ({kind!r})", line)
            return
        self.recognized += 1  # the envelope is Codex's, whatever its type
        reader = self._records.get(kind)
        if reader is not None:
            reader(payload, line, timestamp)
        elif kind not in SILENT_RECORDS:
            self._unknown_once(f"record type {kind!r}", line)

    def _response_item(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        if not self.feed_item(payload, line, timestamp):
            self.warn(f"unknown response_item type {payload.get('type')!r} skipped", line)

    def _event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        kind = payload.get("type")
        handler = self._events.get(kind) if type(kind) is str else None
        if handler is None:
            self._unknown_once(f"event_msg type {kind!r}", line)
        else:
            handler(payload, line, timestamp)

    def _compacted(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        message = payload.get("message")
        self.add_compaction(message if isinstance(message, str) else None, timestamp, "item")

    def _time(self, record: Mapping[str, Any], line: int) -> str | None:
        raw = record.get("timestamp")
        if raw is self._last_time[0] or raw == self._last_time[0]:
            timestamp = self._last_time[1]  # lines written together share their timestamp
        else:
            timestamp = checked_timestamp(raw)
            self._last_time = (raw, timestamp)
        if timestamp is None and raw is not None:
            self._bad_times += 1
            self._first_bad_time = self._first_bad_time or line
        return timestamp

    def _unknown_once(self, what: str, line: int) -> None:
        if what not in self._unknown:
            self._unknown.add(what)
            self.warn(f"unknown {what} skipped (later lines of this type without a warning)", line)

    # --- session and turns -----------------------------------------------------------------

    def _session_meta(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        if self._session_seen:  # a later session_meta marks a resume or a fork of this file
            return
        self._session_seen = True
        meta = self.transcript.metadata
        _put(meta, "session_id", payload.get("id") or payload.get("session_id"))
        _put(meta, "started_at", self._started_at(payload.get("timestamp"), "session_meta", line))
        for key in ("cwd", "originator", "model_provider", "forked_from_id"):
            _put(meta, key, payload.get(key))
        _put(meta, "version", payload.get("cli_version"))
        _put(meta, "cli_version", payload.get("cli_version"))
        if isinstance(meta.get("cwd"), str):
            self.cwd = meta["cwd"]
        source = payload.get("source")
        if isinstance(source, (str, Mapping)) and source:
            meta["source"] = plain_copy(dict(source) if isinstance(source, Mapping) else source)
        if isinstance(payload.get("git"), Mapping):
            meta["git"] = {k: v for k, v in payload["git"].items() if isinstance(v, str)}
        if isinstance(source, Mapping) and "subagent" in source:
            self._subagent_meta(source["subagent"], payload)

    def _subagent_meta(self, subagent: Any, payload: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        meta["subagent"] = plain_copy(subagent)
        spawn = subagent.get("thread_spawn") if isinstance(subagent, Mapping) else None
        spawn = spawn if isinstance(spawn, Mapping) else {}
        _put(
            meta,
            "parent_session_id",
            spawn.get("parent_thread_id") or payload.get("parent_thread_id"),
        )
        _put(meta, "agent_name", spawn.get("agent_nickname") or payload.get("agent_nickname"))
        _put(meta, "agent_role", spawn.get("agent_role") or payload.get("agent_role"))

    def _legacy_meta(self, header: Mapping[str, Any], line: int) -> None:
        meta = self.transcript.metadata
        _put(meta, "session_id", header.get("id"))
        _put(meta, "started_at", self._started_at(header.get("timestamp"), "the header", line))
        if isinstance(header.get("git"), Mapping):
            meta["git"] = {k: v for k, v in header["git"].items() if isinstance(v, str)}

    def _started_at(self, value: Any, what: str, line: int) -> str | None:
        """The session's start: one line holds it, so an unreadable one is said on that line
        rather than counted with the records' own times (L-4)."""
        return warned_timestamp(value, checked_timestamp, lambda reason: self.warn(reason, line),
                                what, name="timestamp")  # fmt: skip

    def _turn_context(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        self._request_started()  # builds of 2025 (0.40, 0.60) write one before each request
        model, cwd = payload.get("model"), payload.get("cwd")
        self._use_model(model)
        mode = payload.get("collaboration_mode")
        self._collaboration_mode(mode.get("mode") if isinstance(mode, Mapping) else None)
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
            self.transcript.metadata.setdefault("cwd", cwd)

    def _use_model(self, model: Any) -> None:
        """The model of the responses that follow (a turn context or a settings switch)."""
        if isinstance(model, str) and model:
            self.model = model
            self.transcript.metadata.setdefault("model", model)

    def _collaboration_mode(self, kind: Any) -> None:
        """Whether the turn runs in Plan mode (config_types.rs ``ModeKind``: ``plan`` or
        ``default``), as ``task_started.collaboration_mode_kind`` and
        ``turn_context.collaboration_mode.mode`` say."""
        if isinstance(kind, str):
            self._plan_mode = kind == "plan"

    def _settings_applied(
        self, payload: Mapping[str, Any], line: int, timestamp: str | None
    ) -> None:
        settings = payload.get("settings")
        found = _first_str(payload, ("model",)) or _first_str(settings, ("model",))
        self._use_model(found)

    def _start_turn(self) -> None:
        self._flush_plans()  # the turn that ends keeps its plans
        self._close_turn()
        self._turn += 1
        self._turn_batches = 0
        self._turn_ended, self._interrupted = False, None
        self._open = {}  # calls of earlier turns that never got an output stay as they are
        self._turn_prompted = self._turn_busy = False
        self._turn_user = self._turn_text = self._usage_text = self._usage_first = None
        self._usage_waiting = None
        self._model_echoes.clear()
        # A cell left running by an earlier turn still runs its script's commands in this one.
        self._code_calls = list(self._cells.values())
        self._flush_review()
        self.close_batch()

    def _task_started(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        self._collaboration_mode(payload.get("collaboration_mode_kind"))
        # Some builds write the prompt just before task_started: that prompt opens this turn.
        if not self._turn_prompted or self._turn_busy:
            self._start_turn()

    def _task_complete(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        self._flush_review()
        self._flush_plans()
        self._turn_ended, self._interrupted = True, None
        error = payload.get("error")
        message = error.get("message") if isinstance(error, Mapping) else None
        if isinstance(message, str) and message:
            self._add_error(AssistantError(message=message, timestamp=timestamp))
        changes: dict[str, Any] = {}
        duration = payload.get("duration_ms")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration > 0:
            changes["turn_duration_ms"] = duration
            self._durations.append(duration)
        first_token = as_int(payload.get("time_to_first_token_ms"))
        if first_token is not None and first_token > 0:
            changes["time_to_first_token_ms"] = first_token
        target: Entry | None = self._turn_text or self._turn_user
        if changes and target is not None:
            self.transcript.update(target, meta={**target.meta, **changes})
        if self.live:  # the turn is over: a call still running has no recorded outcome
            for call in list(self._open.values()):
                if call.status == "executing":
                    self.transcript.update(call, status="unknown")
        for cell in self._cells.values():
            if cell.meta.get("still_running") is True and "running_at_turn_end" not in cell.meta:
                # Codex neither stops nor settles a yielded cell at the turn's end: it runs on
                # until a later wait collects it or the session ends.
                self.transcript.update(cell, meta={**cell.meta, "running_at_turn_end": True})
        self._open = {}
        self.close_batch()

    def _turn_aborted(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        self._turn_ended, self._interrupted = True, None
        reason = payload.get("reason")
        meta: dict[str, Any] = {}
        duration = payload.get("duration_ms")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration > 0:
            meta["turn_duration_ms"] = duration
            self._durations.append(duration)  # a stopped turn took its time too
        self.cancel_open(timestamp)
        marker = AbortMarker(
            reason=reason if isinstance(reason, str) else None, timestamp=timestamp, meta=meta
        )
        self._append(marker)

    def _close_turn(self) -> None:
        """A turn ends (the next one starts, or the file does) with neither ``task_complete``
        nor ``turn_aborted``: say how far its record goes, rather than let it read completed.

        ``codex exec`` up to at least 0.89 stops on Ctrl-C without waiting for its turn to end
        (codex-rs/exec/src/lib.rs, 0.50 to 0.89: the ``ctrl_c`` branch submits
        ``Op::Interrupt`` and breaks the event loop, so ``run_main`` returns at once), and the
        rollout keeps whatever its writer flushed before the process exited. What it flushes
        is, in order (the whole of it in 0.63's TUI, which stays up): the interrupted response's
        items (0.50 to 0.63 record them only then), the call's output ``Wall time: 6.9
        seconds\\naborted by user`` (core/src/tools/parallel.rs ``abort_message``, written only
        when the turn's cancellation token fires), a ``turn_context``, then ``turn_aborted``.
        Real rollouts of 0.50, 0.63, 0.80 and 0.89 end anywhere in it (0.50 and 0.63 often
        before the call, which then leaves nothing to read). So:

        - a call of the turn answered ``aborted by user`` means the user interrupted it: the
          calls still waiting are cancelled, and the turn ends in an interrupt marker;
        - a call still waiting for its output (the file ends or the next turn starts first)
          means the turn's end is not recorded: the call stays ``unknown`` and a marker says
          the record stops before its result (the turn reads stopped, not completed).

        A turn that already ends in an error or a stop keeps it (a second stop says it twice);
        while a rollout is followed live, a waiting call is still running."""
        if self.live or self._turn_ended:
            return
        last = self.transcript.entries[-1] if self.transcript.entries else None
        if isinstance(last, (AbortMarker, AssistantError)):
            return
        cut = self._interrupted
        if cut is not None:
            self.cancel_open(cut.ended_at)
            # meta names the call whose output says so.
            said = {"aborted_call": cut.call_id}
            self._append(stop("reader.interrupted_by_user", timestamp=cut.ended_at, meta=said))
        elif self._open:
            waiting = list(self._open.values())[-1]
            said = {"waiting_call": waiting.call_id}
            self._append(
                stop("reader.turn_end_not_recorded", timestamp=waiting.started_at, meta=said)
            )

    # --- prompts, text and reasoning -------------------------------------------------------

    def add_user(
        self, text: str, counts: Mapping[str, int], timestamp: str | None, line: int, origin: str
    ) -> UserMessage | None:
        shell = user_shell_command(text)
        if shell is not None:
            self._user_shell(*shell, timestamp, line)
            return None
        if is_injected_context(text):
            return None
        meta: dict[str, Any] = dict(counts)
        if text.startswith(_IDE_CONTEXT) and _IDE_REQUEST in text:
            context, _, text = text.partition(_IDE_REQUEST)
            meta["ide_context"] = context.strip()
            text = text.strip()
        full = prompt_text(text, counts)
        if not full:
            return None
        key = _echo_key(full)
        last = self.transcript.entries[-1] if self.transcript.entries else None
        if isinstance(last, UserMessage) and _echo_key(last.text) == key and origin == "event":
            return None  # review mode writes its prompt as two identical events (issue 21.9)
        twin = self._user_echoes.take(origin, key)
        if twin is not None:
            if counts and not any(k in twin.meta for k in counts):
                self.transcript.update(twin, meta={**twin.meta, **counts})
            return None
        if self._turn_prompted or self._turn == 0:
            self._start_turn()
        message = UserMessage(text=full, timestamp=timestamp, meta=meta)
        self._review_answers = set()
        self._append(message)
        self._user_echoes.remember(origin, key, message)
        self._turn_prompted = True
        self._turn_user = message
        return message

    def prompt_of(self, content: Any) -> str:
        """A user message's text without the parts that are injected context."""
        if not isinstance(content, list):
            return super().prompt_of(content)
        own = super().prompt_of  # zero-argument super() does not work inside a comprehension
        parts = [own([part]) for part in content]
        kept = [p for p in parts if p and (not is_injected_context(p) or user_shell_command(p))]
        return "\n".join(kept)

    def _user_shell(self, command: str, result: str, timestamp: str | None, line: int) -> None:
        self._append(user_shell_call(command, result, f"user_shell@{line}", timestamp, self.cwd))

    def add_assistant(
        self, text: str, timestamp: str | None, meta: dict[str, Any], line: int, origin: str
    ) -> None:
        if origin != "review" and self._review_answers:
            said = _echo_key(text)
            if any(said == a or said.startswith(a) for a in self._review_answers):
                self._review = None  # the assistant says the review's answer itself
                self._review_answers = set()
        said, planned = text, False
        if (
            origin == "item"
            and "<proposed_plan>" in text
            and (self._plan_mode or self._plans_waiting)
        ):
            # Plan mode (core/src/session/turn.rs): the reply's <proposed_plan> block is its
            # plan, which the agent_message event leaves out and a Plan item repeats alone.
            # The reply is shown once with the plan in its place: the plan is what the turn
            # answers, so it belongs in the answer, in the order the model wrote it.
            text, said, plans = plan_sections(text)
            if plans:
                meta = {**meta, "proposed_plan": "\n\n".join(plans)}
                planned = True
                self._plan_written()
        key = "text:" + _echo_key(said)
        twin = self._model_echoes.take(origin, key)
        if twin is not None:
            if planned:  # the event came first, without the plan: the item's text is whole
                self.transcript.update(twin, text=text, meta={**twin.meta, **meta})
            return
        entry = AssistantText(text=text, model=self.model, timestamp=timestamp, meta=meta)
        self._append(entry)
        self._model_echoes.remember(origin, key, entry)

    def _user_event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        message = payload.get("message")
        images = [
            image
            for key in ("images", "local_images")
            if isinstance(payload.get(key), list)
            for image in payload[key]
        ]
        counts = {"images": len(images)} if images else {}
        self.add_user(message if isinstance(message, str) else "", counts, timestamp, line, "event")

    def _agent_message_event(
        self, payload: Mapping[str, Any], line: int, timestamp: str | None
    ) -> None:
        message = payload.get("message")
        if isinstance(message, str) and message:
            meta = {"phase": payload["phase"]} if isinstance(payload.get("phase"), str) else {}
            self.add_assistant(message, timestamp, meta, line, "event")

    def _reasoning(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        thinking, parts = reasoning_thinking(item)
        if thinking is None:
            return
        thinking.timestamp = timestamp
        shown = [f"{thinking.form}:{_echo_key(p)}" for p in parts]
        if shown and self._model_echoes.take_all("item", shown):
            return  # the agent_reasoning events came first and are already shown
        self._append(thinking)
        # Events repeat the summary even when the raw text is what is shown.
        summary = _summary_parts(item) if thinking.form == "text" else []
        for key in shown + [f"summary:{_echo_key(p)}" for p in summary]:
            self._model_echoes.remember("item", key, thinking)

    def _reasoning_event(
        self, payload: Mapping[str, Any], line: int, timestamp: str | None
    ) -> None:
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            return
        form: ThinkingForm = (
            "text" if payload.get("type") == "agent_reasoning_raw_content" else "summary"
        )
        key = f"{form}:{_echo_key(text)}"
        if self._model_echoes.take("event", key) is not None:
            return
        thinking = Thinking(text=text, form=form, timestamp=timestamp)
        self._append(thinking)
        self._model_echoes.remember("event", key, thinking)

    def add_instructions(self, role: str, text: str, timestamp: str | None, line: int) -> None:
        """Developer and system messages in a rollout are injected context: not shown."""

    def _inter_agent(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """Inter-agent mail: one row inside the turn, never a turn boundary (issue 21.8). An
        ``agent_message`` item (models.rs: ``content`` parts) or an older build's
        ``inter_agent_communication`` record (protocol.rs: ``content`` a string, and
        ``other_recipients``): the same ``author``, ``recipient`` and ``encrypted_content``."""
        content = item.get("content")
        parts = content if isinstance(content, list) else []
        encrypted = isinstance(item.get("encrypted_content"), str) or any(
            isinstance(p, Mapping) and p.get("type") == "encrypted_content" for p in parts
        )
        envelope, payload = mail_envelope(parts_text(content))
        author, recipient = _first_str(item, ("author",)), _first_str(item, ("recipient",))
        author = author or envelope.get("sender")
        others = item.get("other_recipients")  # the older record's copies to other agents
        others = [r for r in others if isinstance(r, str) and r] if isinstance(others, list) else []
        text = payload.strip()
        if encrypted:
            text = f"{text}\n\n*(encrypted content not shown)*" if text else "*(encrypted)*"
        meta: dict[str, Any] = {
            k: v for k, v in (("author", author), ("recipient", recipient)) if v
        }
        meta.update({f"mail_{k}": v for k, v in envelope.items()})
        own_id = _first_str(item, ("id",))
        call = ToolCall(
            call_id=own_id if own_id and own_id not in self._calls else f"agent_message@{line}",
            name=_MAIL_TOOL,
            description=f"{author or '?'} → {', '.join([recipient or '?', *others])}",
            status="success",  # recorded in the history: it was delivered
            result=ToolResult(text=text or None, kind="markdown"),
            started_at=timestamp,
            timestamp=timestamp,
            meta=meta,
        )
        self._calls[call.call_id] = call
        self.close_batch()
        self._append(call)

    # --- usage, compaction, notices --------------------------------------------------------

    def _token_count(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        info = payload.get("info")
        if not isinstance(info, Mapping):
            self._request_started()  # a request's rate limits, before anything it answers
            return
        total = codex_usage(info.get("total_token_usage"))
        before, carrier = self._total_usage, self._usage_text or self._usage_first
        if total is not None:
            self._total_usage = total
        if before is not None and total is not None and total == before:
            # The same totals again: the rate limits of the next request, no response's usage.
            self._request_started()
            return
        # The response's usage: its last_token_usage, else what the cumulative total grew by;
        # on its text, else on its first entry (spec U-1).
        last = codex_usage(info.get("last_token_usage"))
        if last is None and total is not None and (before is None or not _shrank(total, before)):
            last = _difference(total, before or Usage())
        if last is not None:
            for name, value in counts_of(last).items():  # the session's, each response once
                self._session_usage[name] = self._session_usage.get(name, 0) + value
            if carries(carrier, last):
                self.transcript.update(carrier, usage=last)
            elif carrier is None:
                self._usage_waiting = last  # the response's items are still to come
        self._usage_text = self._usage_first = None

    def _request_started(self) -> None:
        """A model request starts: what was written before it answered the one before.

        Builds of 2025 (0.40 and 0.60 among them) wrote a response's reasoning and text
        events, then its token_count, then its items (calls among them), and a
        ``turn_context`` and a token_count of rate limits as the next request started: the
        calls of one response must not carry the usage of the next. Later builds write the
        items before the token_count; for them this changes nothing."""
        self._usage_text = self._usage_first = self._usage_waiting = None

    def add_compaction(self, summary: str | None, timestamp: str | None, origin: str) -> None:
        last = self.transcript.entries[-1] if self.transcript.entries else None
        if self._boundary is not None and self._boundary[1] is last and self._boundary[0] != origin:
            # compacted and context_compacted report the same compaction.
            if summary and not getattr(last, "summary", None):
                self.transcript.update(last, summary=summary)
            self._boundary = None
            return
        super().add_compaction(summary, timestamp, origin)
        self._boundary = (origin, self.transcript.entries[-1])

    def _context_compacted(
        self, payload: Mapping[str, Any], line: int, timestamp: str | None
    ) -> None:
        self.add_compaction(None, timestamp, "event")

    def _error_event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        message = payload.get("message")
        if isinstance(message, str) and message:
            self._add_error(AssistantError(message=message, timestamp=timestamp))
        else:
            self._add_error(failure("reader.error_event", timestamp=timestamp))

    def _add_error(self, error: AssistantError) -> None:
        last = self.transcript.entries[-1] if self.transcript.entries else None
        if isinstance(last, AssistantError) and last.message == error.message:
            return  # task_complete repeats the error event that ended the turn
        self._append(error)

    def _notice_event(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        kind = str(payload.get("type"))
        message = payload.get("message")
        if isinstance(message, str) and message:
            self._notice(message, kind, timestamp, _NOTICE_EVENTS[kind])

    def _notice(
        self,
        text: str | tuple[str, Wording],
        subtype: str,
        timestamp: str | None,
        level: Literal["info", "warning"] = "info",
        **meta: Any,
    ) -> None:
        """A notice of the source's ``text``, or of the reader's words (:func:`worded`)."""
        text, wording = text if isinstance(text, tuple) else (text, None)
        notice = SystemNotice(text=text, level=level, subtype=subtype, timestamp=timestamp,
                              meta=meta, wording=wording)  # fmt: skip
        self._append(notice)

    def _thread_name(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        _put(self.transcript.metadata, "title", payload.get("thread_name"))

    def _goal_updated(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """The thread's goal (protocol.rs ``ThreadGoal``: ``objective``, ``status``) in
        ``metadata["goal"]``, and a notice when its objective or status changes: Codex writes
        the event again each time it counts the tokens the goal used."""
        goal = payload.get("goal")
        objective = _first_str(goal, ("objective",))
        if objective is None:
            return
        status = _first_str(goal, ("status",))
        self.transcript.metadata["goal"] = {"objective": objective} | (
            {"status": status} if status else {}
        )
        if (objective, status) == self._goal:
            return
        self._goal = (objective, status)
        state = _CAMEL_BREAK.sub(" ", status).lower() if status and status != "active" else None
        key = "reader.goal.state" if state else "reader.goal"
        self._notice(worded(key, {"state": state, "objective": objective}), "goal", timestamp)

    def _review_started(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """One notice that says a review ran, and on what (issue 21.9)."""
        request = payload.get("review_request")
        request = request if isinstance(request, Mapping) else payload
        target = review_target(request.get("target"))
        hint = _first_str(request, ("user_facing_hint",)) or _first_str(
            payload, ("user_facing_hint",)
        )
        said: dict[str, str | None] = {"said": hint, "hint": hint}
        if target is None:
            key = "reader.code_review.said" if hint else "reader.code_review"
        else:
            what, key, hinted, values = target
            said = {**values, "hint": hint}
            if hint and _echo_key(hint).lower() != _echo_key(what).lower():
                key = hinted
        self._notice(worded(key, said), "review", timestamp)

    def _review_ended(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """The review's answer: kept until the turn ends, and dropped when the assistant text
        that follows repeats it (Codex writes both, issue 21.9)."""
        review = payload.get("review_output")
        review = review if isinstance(review, Mapping) else {}
        explanation = _first_str(review, ("overall_explanation",))
        findings = review.get("findings")
        titles = [
            f"- {f['title']}"
            for f in (findings if isinstance(findings, list) else [])
            if isinstance(f, Mapping) and isinstance(f.get("title"), str)
        ]
        answer = "\n".join(([explanation] if explanation else []) + titles)
        self._flush_review()
        if answer:
            self._review = (answer, timestamp)
            self._review_answers = {_echo_key(answer)} | (
                {_echo_key(explanation)} if explanation else set()
            )

    def _flush_review(self) -> None:
        """A review answer no assistant text repeated becomes the answer itself."""
        if self._review is None:
            return
        answer, timestamp = self._review
        self._review = None
        self.add_assistant(answer, timestamp, {"review": True}, 0, "review")

    def _rolled_back(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        turns = as_int(payload.get("num_turns"))
        key = (
            "reader.rolled_back" if not turns
            else "reader.rolled_back.one" if turns == 1 else "reader.rolled_back.other"
        )  # fmt: skip
        self._notice(worded(key, {"turns": turns}), "rollback", timestamp)

    def _undo_completed(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        success = payload.get("success") is not False
        message = payload.get("message")
        text = (
            message
            if isinstance(message, str) and message
            else worded("reader.undo_completed" if success else "reader.undo_failed")
        )
        self._notice(text, "undo", timestamp, "info" if success else "warning")

    # --- tool calls ------------------------------------------------------------------------

    def _output(self, item: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """A call's output; a code-mode notification (:meth:`_notification`) joins its cell's
        output instead of replacing it, and the cell's answer keeps the notifications
        recorded before it, ahead of what it says."""
        call_id = item.get("call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is not None and self._notification(call, item):
            return
        super()._output(item, line, timestamp)
        early = self._early_notes.pop(call_id, None) if isinstance(call_id, str) else None
        if call is not None and early is not None and call.result is not None:
            shown = _joined(early, call.result.text)
            self.transcript.update(call, result=replace(call.result, text=shown))

    def _notification(self, call: ToolCall, item: Mapping[str, Any]) -> bool:
        """Whether ``item`` is an output a script's ``notify(value)`` wrote for its ``exec``
        cell, and if so add it to the cell's output, its status unchanged. Codex answers an
        ``exec`` call with a ``Script …`` status line first, always; a notification is the
        bare text under the same call id, injected into the turn and recorded when the turn
        next takes its pending input (``Session::inject_response_items``): after the answer,
        as Codex 0.171 writes it, and the cell's shown output gains it after what it already
        shows. Nothing orders the two, so one may come first, told by the tool's ``name``
        the injection writes (an answer has none): the cell, still running, shows it, and
        its answer follows it (:meth:`_output`)."""
        if (
            item.get("type") != "custom_tool_call_output"
            or call.name != _CODE_MODE_TOOL
            or not call.meta.get("code_mode")
        ):
            return False
        unanswered = call.result is None or self._open.get(call.call_id) is call
        if unanswered and item.get("name") != _CODE_MODE_TOOL:
            return False  # its answer (an error before the script ran has no Script line)
        text, _ = output_content(item.get("output"))
        if text is None or _CELL_RUNNING.match(text) or text.startswith(_CELL_ENDED):
            return False
        self.close_batch()  # the next call belongs to the next response
        meta = {**call.meta, "notifications": [*call.meta.get("notifications", ()), text]}
        if not unanswered and call.result is not None:
            result = replace(call.result, text=_joined(call.result.text, text))
        else:
            early = _joined(self._early_notes.get(call.call_id), text)
            self._early_notes[call.call_id] = early
            result = ToolResult(text=early)
        self.transcript.update(call, result=result, meta=meta)
        return True

    def start_call(
        self,
        call_id: str,
        name: str,
        args: Any,
        line: int,
        timestamp: str | None,
        status: ToolStatus | None = None,
        meta: dict[str, Any] | None = None,
        *,
        batch: bool = True,
    ) -> ToolCall:
        meta = dict(meta or {})
        namespace = meta.get("namespace")
        if isinstance(namespace, str) and namespace.startswith("mcp__"):
            meta["tool"] = name
            name = mcp_name(namespace, name)
        code_mode = name == _CODE_MODE_TOOL and isinstance(args, str)
        cell = args.get("cell_id") if name == _CODE_MODE_WAIT and isinstance(args, dict) else None
        if code_mode or cell is not None:
            meta["code_mode"] = True  # its status is what the script printed, as exec's
        if cell is not None:
            meta["tool"] = name
            name = _CELL_WAIT
        call = super().start_call(call_id, name, args, line, timestamp, status, meta, batch=batch)
        if code_mode:
            self._code_calls.append(call)
            self.transcript.update(call, description=script_description(str(args)))
        elif cell is not None:
            # Described by the commands of the cell it waits on, as write_stdin by its process.
            started = self._cells.get(stringify(cell))
            target = started.description if started else None
            self.transcript.update(call, description=target or f"cell {stringify(cell)}")
        elif name == _STDIN_TOOL and isinstance(args, dict):
            self._stdin_call(call, args)
        if name in _SPAWN_TOOLS:
            self._spawns.append((call, line))
            task = _first_str(args, ("message", "prompt", "task", "description", "task_name"))
            self.transcript.update(call, subagent=SubAgent(task=task))
        return call

    def _stdin_call(self, call: ToolCall, args: Mapping[str, Any]) -> None:
        """``write_stdin``: described by the command of the process it polls (no ``chars``)
        or types into (the ``chars`` first, as JSON shows them), its session in
        ``meta["session_id"]``; ``session 20075`` when the call that started it is not in the
        file."""
        session = as_int(args.get("session_id"))
        if session is None:
            return
        started = self._sessions.get(session)
        target = (started.description if started else None) or f"session {session}"
        chars = args.get("chars")
        typed = isinstance(chars, str) and chars != ""
        meta = {**call.meta, "session_id": session, "poll": not typed}
        described = f"{codec.dumps(chars)} → {target}" if typed else target
        self.transcript.update(call, description=described, meta=meta)

    def new_batch_id(self, line: int) -> str:
        self._turn_batches += 1
        return f"turn{self._turn}-batch{self._turn_batches}"

    def outcome(self, call: ToolCall, value: Any) -> tuple[ToolStatus, ToolResult, dict[str, Any]]:
        """Status from the exit code in the output, else from events, else from what the text
        says (L-3, :func:`states_failure`), else unknown."""
        self._response_first = None  # the next items are the next response's
        value, success = _unwrap_output(value)
        if "__" in call.name:  # an MCP tool (``server__tool``, ``mcp__server__tool``)
            text, images = output_content(_mcp_blocks(value), _mcp_part)
        else:
            text, images = output_content(value)
        changes: dict[str, Any] = {}
        meta = dict(call.meta)
        running = None
        facts = exec_output(text) if text else None
        if facts is not None:
            text = facts.body
            if facts.exit_code is not None:
                meta["exit_code"] = facts.exit_code
            if facts.header:
                meta["output_header"] = facts.header
                running = _RUNNING_SESSION.search(facts.header)
                if running is not None and call.name != _STDIN_TOOL:
                    meta["session_id"] = int(running.group(1))  # its process runs on
                    self._sessions[meta["session_id"]] = call
            if facts.duration_ms is not None:
                changes["duration_ms"] = facts.duration_ms
        status = _derived_status(call, text, facts, success)
        if (
            status == "cancelled"
            and text
            and was_aborted(text)
            and self._open.get(call.call_id) is call
        ):
            self._interrupted = call  # an interrupt cut this turn off (:meth:`_close_turn`)
        ran = aborted_after_ms(text) if status == "cancelled" and text else None
        if ran is not None and "duration_ms" not in changes:
            changes["duration_ms"] = ran
        if running is not None and status != "cancelled":
            # The call answered while its process went on: neither a success nor a failure
            # yet. The process's end settles the call that started it (:meth:`_late_end`,
            # :meth:`_process_exited`).
            status, meta["still_running"] = "unknown", True
        elif call.meta.get("code_mode") and text:
            status = self._cell_answer(call, text, status, meta)
        elif (
            call.name == _STDIN_TOOL
            and facts is not None
            and facts.exit_code is not None
            and self._process_exited(meta.get("session_id"), facts.exit_code)
        ):
            # The process's outcome is its starting call's; this poll only read it, so a
            # failed process counts once.
            status = "success"
        if meta != call.meta:
            changes["meta"] = meta
        diff = self._diffs.pop(call.call_id, None)
        patch = call.name == _PATCH_TOOL or self.patch_of(call) is not None
        if patch or diff is not None:  # a FileChange item names a patch run by exec_command
            result = patch_result(text, diff, status, images)
        else:
            result = tool_result(call, text, images, status, patch=None)
        if call.name in _SPAWN_TOOLS and text and call.subagent is not None:
            spawned = _spawn_output(text)
            if spawned:
                changes["subagent"] = replace(call.subagent, **spawned)
        return status, result, changes

    def _process_exited(self, session: Any, code: int) -> bool:
        """A ``write_stdin`` answer says its process exited (``Process exited with code 4``):
        the outcome of the ``exec_command`` that started it, unless an end record of the
        process came first. Rollouts of ``codex exec`` before 0.171 write no such record (no
        ``exec_command_end``, no ``CommandExecution``): this answer is all they say of it.
        True when the call that started it is known."""
        started = self._sessions.get(session) if isinstance(session, int) else None
        if started is None:
            return False
        if started.meta.get("still_running") is True:
            meta = {k: v for k, v in started.meta.items() if k != "still_running"}
            meta["exit_code"] = code
            self.transcript.update(started, status="success" if code == 0 else "error", meta=meta)
        return True

    def _cell_answer(
        self, call: ToolCall, text: str, status: ToolStatus, meta: dict[str, Any]
    ) -> ToolStatus:
        """A code-mode answer, ``exec``'s or a ``wait``'s. One that yielded (``Script running
        with cell ID 1``) tells of a script still running: ``meta["still_running"]``, no
        outcome yet. The ``wait`` whose answer ends the script (``Script completed`` /
        ``failed`` / ``terminated``) gives the cell that outcome (:meth:`_cell_collected`)."""
        yielded = _CELL_RUNNING.match(text)
        if yielded is not None:
            cell = yielded.group(1)
            meta["still_running"], meta["cell_id"] = True, cell
            if call.name == _CODE_MODE_TOOL:
                self._cells[cell] = call
            failed = self._printed_so_far(cell, text) == "error"
            if call.name == _CODE_MODE_TOOL:
                return "error" if failed else "unknown"
            started = self._cells.get(cell)
            if failed and started is not None and started.status != "error":
                self.transcript.update(started, status="error")
            return "unknown"
        if call.name == _CELL_WAIT and text.startswith(_CELL_ENDED):
            cell = stringify(call.args.get("cell_id")) if isinstance(call.args, dict) else None
            meta["cell_id"] = cell
            collected = self._cells.pop(cell, None) if cell is not None else None
            earlier = self._cells_printed.pop(cell, None) if cell is not None else None
            if collected is not None:
                # The script's outcome is its cell's; this wait only collected it, so a failed
                # script counts once.
                self._cell_collected(collected, call, script_outcome(earlier, status))
                return "success"
        return status

    def _printed_so_far(self, cell: str, text: str) -> ToolStatus | None:
        """What a yielded cell's script printed of its commands' exit codes up to this answer
        (:func:`printed_status` over all of them). Code mode answers a yield, and each ``wait``,
        with only what the script printed since the previous answer, so an exit code printed
        before the cell yielded is in no later answer."""
        now = printed_status(text)
        earlier = self._cells_printed.get(cell)
        so_far = "error" if "error" in (earlier, now) else earlier or now
        if so_far is not None:
            self._cells_printed[cell] = so_far
        return so_far

    def _cell_collected(self, cell: ToolCall, wait: ToolCall, status: ToolStatus) -> None:
        """A yielded cell's script ended in ``wait``'s answer: the cell's outcome is the one
        the wait collected, which holds the rest of its output (``meta["collected_by"]``: the
        wait's call id); the cell's own result stays as recorded."""
        meta = {k: v for k, v in cell.meta.items() if k not in _RUNNING_MARKS}
        meta["collected_by"] = wait.call_id
        self.transcript.update(cell, status=status, meta=meta)

    def _open_call(self, payload: Mapping[str, Any]) -> ToolCall | None:
        call_id = payload.get("call_id")
        return self._open.get(call_id) if isinstance(call_id, str) else None

    def _exec_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """``exec_command_end``: the exit code, duration and output of its call. One written
        after its call was answered ends a command an interrupt cancelled or a process its
        ``exec_command`` left running (:meth:`_late_end`): builds of February to June 2026
        wrote it (an app-server thread with ``persistExtendedHistory``: the rollout's extended
        events) where 0.171 writes a ``CommandExecution`` item."""
        call = self._open_call(payload)
        if call is None:
            call_id = payload.get("call_id")
            ended = self._calls.get(call_id) if isinstance(call_id, str) else None
            if ended is not None:
                self._late_end(ended, payload)
            else:
                self._inner_call("exec_command", payload, timestamp)
            return
        self.transcript.update(call, **_exec_changes(call, payload))

    def _patch_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call = self._open_call(payload)
        if call is None:
            self._inner_call(_PATCH_TOOL, payload, timestamp)
            return
        diff = changes_diff(payload.get("changes"), self.cwd)
        if diff is not None:
            self._diffs[call.call_id] = diff
        self.transcript.update(call, **_patch_changes(payload, diff))

    def _item_completed(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """A finished item (protocol/src/items.rs ``TurnItem``). Codex 0.171 writes these
        instead of ``patch_apply_end`` / ``exec_command_end``, and a paginated rollout keeps
        them in place of ``mcp_tool_call_end`` too (rollout/src/policy.rs): a ``FileChange``
        (an ``apply_patch``, also one run through ``exec_command``) gives its call's status and
        diff, a ``CommandExecution`` its exit code and duration, an ``McpToolCall`` or a
        ``DynamicToolCall`` its outcome, error and duration. A ``Plan`` is a plan-mode plan
        (:meth:`_plan_item`). Other items (messages, reasoning, agent calls) echo records
        already read; like every event, it only enriches a call still waiting for its output, save
        a command whose call was answered before it ended (:meth:`_command_ended`)."""
        item = payload.get("item")
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            return
        kind = item.get("type")
        if kind == "Plan":
            self._plan_item(item, timestamp)
            return
        call = self._open.get(item["id"])
        if call is None:
            if kind == "CommandExecution":
                self._command_ended(item, timestamp)
            return
        if kind == "FileChange":
            diff = changes_diff(item.get("changes"), self.cwd)
            if diff is not None:
                self._diffs[call.call_id] = diff
            state = item.get("status")
            ended = {"success": state == "completed"} if state in _FILE_CHANGE_ENDED else {}
            self.transcript.update(call, **_patch_changes({**item, **ended}, diff))
        elif kind == "CommandExecution":
            self.transcript.update(call, **_exec_changes(call, item))
        elif kind == "McpToolCall":
            self._unknown_blocks(item.get("result"), line)
            self._settle(call, _mcp_item_changes(item))
        elif kind == "DynamicToolCall":
            self._settle(call, _dynamic_changes(item))

    def _command_ended(self, item: Mapping[str, Any], timestamp: str | None) -> None:
        """A ``CommandExecution`` that ends after its call was answered, or of no call: a
        command an interrupt cancelled (:meth:`_interrupted_command`); a process its
        ``exec_command`` left running (``Process running with session ID``, polled with
        ``write_stdin``), whose exit code and duration are the call's outcome (the output the
        model was given stays); a command a code-mode script ran (``exec-<uuid>``), nested under
        its ``exec`` (:meth:`_inner_call`)."""
        call = self._calls.get(item["id"])
        if call is None:
            if item["id"].startswith("exec-"):
                self._inner_call("exec_command", {**item, "call_id": item["id"]}, timestamp)
        else:
            self._late_end(call, item)

    def _late_end(self, call: ToolCall, record: Mapping[str, Any]) -> None:
        """The end of a command (a ``CommandExecution`` item or an ``exec_command_end``, whose
        fields are the same) written after its call was answered: a command an interrupt
        cancelled (:meth:`_interrupted_command`), or a process the call left running, whose
        exit code and duration are then the call's outcome (the output the model was given
        stays). Its ``process_id``, where written, is the session the call's answer named."""
        if call.status == "cancelled":
            self._interrupted_command(call, record)
            return
        session = call.meta.get("session_id")
        process = as_int(record.get("process_id"))
        if session is None or call.name == _STDIN_TOOL or process not in (None, session):
            return
        changes = _exec_changes(call, record)
        meta = dict(changes.get("meta", call.meta))
        meta.pop("still_running", None)  # it ended
        self.transcript.update(call, **{**changes, "meta": meta})

    def _interrupted_command(self, call: ToolCall, item: Mapping[str, Any]) -> None:
        """A command's end (``CommandExecution``, ``exec_command_end``) written after an
        interrupt settled its call (the model was told "aborted by user"): the call keeps what
        the command printed before it (F-10: a cancelled tool keeps its partial output), its
        duration and exit code."""
        changes: dict[str, Any] = {}
        duration = _duration_ms(item.get("duration"))
        if duration is not None:
            changes["duration_ms"] = duration
        code = as_int(item.get("exit_code"))
        if code is not None:
            changes["meta"] = {**call.meta, "exit_code": code}
        told = call.result.text if call.result is not None else None
        shown = partial_output(item.get("aggregated_output"), told)
        if shown is not None:
            changes["result"] = text_result(shown)
        if changes:
            self.transcript.update(call, **changes)

    def _plan_item(self, item: Mapping[str, Any], timestamp: str | None) -> None:
        """A ``Plan`` item: the plan core/src/session/turn.rs takes from a plan-mode reply's
        ``<proposed_plan>`` block, written before or after the reply. The reply shows it in
        place (:meth:`add_assistant`); a plan no reply of the turn has shown waits for one
        until the turn ends (:meth:`_flush_plans`)."""
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            return
        if self._plans_shown:
            self._plans_shown -= 1  # the reply that wrote it shows it already
        else:
            self._plans_waiting.append((text, timestamp))

    def _plan_written(self) -> None:
        """A reply showed its plan: its ``Plan`` item, come or to come, is a copy."""
        if self._plans_waiting:
            del self._plans_waiting[0]
        else:
            self._plans_shown += 1

    def _flush_plans(self) -> None:
        """The turn ends: a ``Plan`` item no reply showed (the reply is missing) is shown on
        its own, so the plan is not lost."""
        waiting, self._plans_waiting, self._plans_shown = self._plans_waiting, [], 0
        for text, timestamp in waiting:
            plan = text.strip("\n")
            shown = f"{_PLAN_HEADING}\n\n{plan}"
            self._append(
                AssistantText(
                    text=shown, model=self.model, timestamp=timestamp, meta={"proposed_plan": plan}
                )
            )

    def _settle(self, call: ToolCall, changes: dict[str, Any]) -> None:
        """An end event's or finished item's outcome on its call; a result the call has
        already is kept."""
        if call.result is not None:
            changes.pop("result", None)
        if changes:
            self.transcript.update(call, **changes)

    def _mcp_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        outcome = payload.get("result")
        self._unknown_blocks(outcome.get("Ok") if isinstance(outcome, Mapping) else None, line)
        call = self._open_call(payload)
        if call is None:
            self._inner_call("mcp", payload, timestamp)
            return
        self._settle(call, _mcp_changes(payload))

    def _unknown_blocks(self, result: Any, line: int) -> None:
        """Warn of an MCP result's content blocks of a type MCP does not define, once per
        type (the line that warns is accounted as warned about, :meth:`_Pass.feed`)."""
        blocks = result.get("content") if isinstance(result, Mapping) else None
        mcp.warn_unknown(blocks, lambda reason: self.warn_once(reason, line))

    def _inner_call(self, kind: str, payload: Mapping[str, Any], timestamp: str | None) -> None:
        """An end event whose call no response item holds: a call a code-mode script made
        (``call_id`` ``exec-<uuid>``, issue 21.2), nested under the ``exec`` call running it.
        An ``exec-`` call with no code-mode call before it in the turn stands on its own, so it
        is not lost; any other unknown id echoes a call this file does not hold."""
        call_id = payload.get("call_id")
        if not isinstance(call_id, str) or call_id in self._calls:
            return
        host = self._code_host(payload)
        if host is None and not call_id.startswith("exec-"):
            return
        if kind == "mcp":
            invocation = payload.get("invocation")
            invocation = invocation if isinstance(invocation, Mapping) else {}
            server = _first_str(invocation, ("server",)) or "mcp"
            tool = _first_str(invocation, ("tool",)) or "tool"
            name, args = f"mcp__{server}__{tool}", plain_copy(invocation.get("arguments"))
            changes = _mcp_changes(payload)
        elif kind == _PATCH_TOOL:
            diff = changes_diff(payload.get("changes"), self.cwd)
            files = list(payload["changes"]) if isinstance(payload.get("changes"), Mapping) else []
            name, args = _PATCH_TOOL, {"path": files} if files else None
            changes = _patch_changes(payload, diff)
        else:
            command = payload.get("command")
            shown = (
                shlex.join(command) if isinstance(command, list) and _all_str(command) else command
            )
            name, args = "exec_command", {"cmd": shown} if isinstance(shown, str) else None
            changes = _exec_changes(None, payload)
        changes.setdefault("status", "unknown")
        if host is not None and host.status == "cancelled" and changes["status"] == "error":
            # It ended after its cell was stopped (a wait's terminate, an interrupt), killed
            # with it (exit code -1): stopped, not failed.
            changes["status"] = "cancelled"
        argv = payload.get("command") if name == "exec_command" else None
        described = {"cmd": argv} if isinstance(argv, list) else args  # ``bash -lc x`` reads x
        inner = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_call(name, described, self.cwd),
            started_at=timestamp,
            timestamp=timestamp,
            ended_at=timestamp,
            **changes,
        )
        self._calls[call_id] = inner
        if host is None:
            inner.batch_id = None
            self._append(inner)
            return
        child = self._inner.get(host.call_id)
        if child is None:
            child = self._inner[host.call_id] = Transcript(metadata={"source_format": NAME})
        child.append(inner)
        # The calls a code-mode cell's script ran: they open under its row, but the cell is no
        # agent's run (not counted as a sub-agent, no F-7 line).
        agent = host.subagent or SubAgent(is_run=False)
        calls = len(child.entries)
        self.transcript.update(host, subagent=replace(agent, transcript=child, tool_count=calls))

    def _code_host(self, payload: Mapping[str, Any]) -> ToolCall | None:
        """The turn's ``exec`` call that ran a nested call: the last whose script runs its
        command (cells run side by side, and a stopped cell's command ends late), else the
        last one."""
        if not self._code_calls:
            return None
        argv = payload.get("command")
        command = _script_command_text(argv) if isinstance(argv, list) else None
        if command:
            for host in reversed(self._code_calls):
                if command in script_commands(str(host.args)):
                    return host
        return self._code_calls[-1]

    def _dynamic_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call = self._open_call(payload)
        if call is not None:
            self._settle(call, _dynamic_changes(payload))

    def _spawn_end(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        call_id = payload.get("call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None or call.name not in _SPAWN_TOOLS:
            return
        agent = call.subagent or SubAgent()
        spawned = replace(
            agent,
            agent_id=_first_str(payload, ("new_thread_id",)) or agent.agent_id,
            name=_first_str(payload, ("new_agent_nickname", "new_agent_role")) or agent.name,
            task=agent.task or _first_str(payload, ("prompt",)),
        )
        changes: dict[str, Any] = {"subagent": spawned}
        status = payload.get("status")
        state = next(iter(status), None) if isinstance(status, Mapping) else status
        if isinstance(state, str) and state in _FAILED_AGENT:
            # No thread was started ("not_found") or it failed at once (issue 21.7).
            changes["status"] = "error"
            detail = status.get(state) if isinstance(status, Mapping) else None
            reason = detail if isinstance(detail, str) and detail else f"spawn {state}"
            changes["subagent"] = replace(spawned, reason=reason)
            if call.result is None:
                changes["result"] = text_result(reason)
        self.transcript.update(call, **changes)

    def _agent_activity(self, payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
        """``sub_agent_activity {kind: "started", event_id: <spawn call id>, agent_thread_id,
        agent_path}``: who the spawned agent is (issue 21.7)."""
        event_id = payload.get("event_id")
        call = self._calls.get(event_id) if isinstance(event_id, str) else None
        if call is None or call.subagent is None:
            return
        agent = call.subagent
        path = _first_str(payload, ("agent_path",))
        name = path.rstrip("/").rsplit("/", 1)[-1] if path else None
        self.transcript.update(
            call,
            subagent=replace(
                agent,
                agent_id=agent.agent_id or _first_str(payload, ("agent_thread_id",)),
                name=agent.name or name or None,
            ),
        )

    # --- the end ---------------------------------------------------------------------------

    def finish(
        self,
        path: Path | None = None,
        depth: int = 0,
        *,
        source: Source | None = None,
        seen: set[Path] | None = None,
        above: frozenset[Path] = frozenset(),
    ) -> None:
        """Session totals into ``metadata``; child threads' rollouts linked in (issue 21.1),
        this rollout being ``depth`` sub-agents deep, nested in the rollouts ``above`` (resolved
        paths), ``seen`` those this load linked so far (this one and those above among them)."""
        self._flush_review()
        self._flush_plans()
        self._close_turn()
        meta = self.transcript.metadata
        if self._session_usage:
            meta["usage"] = dict(self._session_usage)
        if self._durations:
            meta["duration_ms"] = sum(self._durations)
        if self._bad_times:
            reason = (
                f"{self._bad_times} line(s) with a placeholder or unreadable timestamp;"
                " no time shown"
            )
            self.warn(reason, self._first_bad_time)
        if path is not None and self._spawns:
            seen = seen if seen is not None else {path.resolve()}
            threads = _ChildThreads(path, meta.get("session_id"), lambda r: self.warn(r, None))
            here = above | {path.resolve()}
            for call, line in self._spawns:
                self._link_subagent(call, line, threads, depth, source, seen, here)

    def _link_subagent(
        self,
        call: ToolCall,
        line: int,
        threads: _ChildThreads,
        depth: int,
        source: Source | None,
        seen: set[Path],
        above: frozenset[Path],
    ) -> None:
        """The rollout of the thread ``call`` (on ``line``) spawned, as its sub-agent's
        transcript: read one level deeper than ``depth``, this rollout's, unless it is one of
        ``above`` (this rollout and those it nests in) or is linked under another call."""
        agent = call.subagent
        if agent is None or agent.transcript is not None or call.status == "error":
            return
        found = threads.find(agent.agent_id, agent.name)
        if found is None:
            return
        resolved = found.resolve()
        what = f"child thread rollout {found.name} of call {call.call_id}"
        if resolved in above:
            # Only a broken or hostile file names a thread it runs in (Codex gives each spawn
            # a new thread): read again, it would nest itself for ever.
            reason = f"{what} is already shown above it (sub-agents in a circle): not nested again"
            self.warn(reason, line)
            return
        if resolved in seen:
            # Linked under another call of this load. Codex writes that: a child spawned with
            # ``fork_context`` starts from its parent's history, written into its own rollout
            # (codex-rs core/src/agent/control.rs ``spawn_forked_thread``; builds before
            # ``keep_forked_rollout_item`` copied it whole, ``spawn_agent`` calls and their
            # answers too), so it replays the parent's earlier spawns, whose threads the
            # parent's own calls already show.
            return
        if depth >= MAX_DEPTH:
            instead = f"it loads on its own: turnfold.load({str(found)!r})"
            self.warn(too_deep(what, depth + 1, instead), line)
            return
        seen.add(resolved)
        try:
            child, child_source = _load_file(found, depth + 1, seen, above)
        except (OSError, TranscriptFormatError) as exc:
            self.warn(f"child thread rollout {found.name} not read: {exc}", line)
            return
        if source is not None:  # the child's records are this load's records too (issue 11)
            source.accounting.merge(child_source.accounting)
        usage = child.metadata.get("usage")
        calls = child.tool_calls()
        linked = replace(
            agent,
            transcript=child,
            agent_id=agent.agent_id or child.metadata.get("session_id"),
            name=agent.name or child.metadata.get("agent_name"),
            tool_count=len(calls),
            subagent_count=sum(1 for c in calls if c.subagent is not None),
            duration_ms=child.metadata.get("duration_ms"),
            output_tokens=usage.get("output_tokens") if isinstance(usage, dict) else None,
        )
        self.transcript.update(call, subagent=linked)

    # --- bookkeeping -----------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        if isinstance(entry, UserMessage):
            self._model_echoes.clear()
            self._response_first = self._usage_waiting = None
        else:
            by_model = isinstance(entry, (Thinking, AssistantText)) or (
                isinstance(entry, ToolCall)
                and not entry.user_initiated
                and entry.name != _MAIL_TOOL
            )
            if by_model and self._usage_first is None:
                self._usage_first = entry
            waiting = self._usage_waiting
            if by_model and waiting is not None and carries(entry, waiting):
                entry.usage = waiting  # the entry is not shared yet
                self._usage_waiting = None
            if by_model and self._response_first is None:
                self._response_first = entry
                if self.model and not isinstance(entry, AssistantText):
                    # A response's model is on its AssistantText; one of calls only names it
                    # on its first entry (issue 21.13). The entry is not shared yet.
                    entry.meta["model"] = self.model
            self._user_echoes.clear()  # the model answered: the prompt's twin is not coming
            self._turn_busy = True
        super()._append(entry)
        if isinstance(entry, AssistantText):
            self._turn_text = self._usage_text = entry
        return entry


_UNCOMMITTED = frozenset({"uncommittedChanges", "uncommitted_changes"})


def review_target(target: Any) -> tuple[str, str, str, dict[str, str]] | None:
    """What a review covers, from its ``target`` (uncommitted changes, a base branch, a commit,
    custom instructions): its English, as Codex's hint may say it too, and the notice's
    message keys (alone, and after the review's hint) with their values."""
    if not isinstance(target, Mapping):
        return None
    if str(target.get("type")) in _UNCOMMITTED:
        return ("uncommitted changes", "reader.code_review.uncommitted",
                "reader.code_review.hint.uncommitted", {})  # fmt: skip
    branch = _first_str(target, ("branch",))
    if branch:
        return (f"changes against {branch}", "reader.code_review.branch",
                "reader.code_review.hint.branch", {"branch": branch})  # fmt: skip
    sha = _first_str(target, ("sha", "commit"))
    if sha:
        sha, title = sha[:12], _first_str(target, ("title",))
        if title:
            return (f"commit {sha} ({title})", "reader.code_review.commit.title",
                    "reader.code_review.hint.commit.title",
                    {"sha": sha, "title": title})  # fmt: skip
        return (f"commit {sha}", "reader.code_review.commit", "reader.code_review.hint.commit",
                {"sha": sha})  # fmt: skip
    said = _first_str(target, ("instructions",))
    if said is None:
        return None
    return said, "reader.code_review.said", "reader.code_review.hint.said", {"said": said}


def mail_envelope(text: str) -> tuple[dict[str, str], str]:
    """The ``Message Type: … / Sender: … / Payload:`` header of an inter-agent mail, and
    its payload; a text without that header is all payload.

    >>> mail_envelope("Message Type: update\\nSender: /root\\nPayload:\\nDone.")
    ({'message_type': 'update', 'sender': '/root'}, 'Done.')
    """
    head, marker, payload = text.partition("Payload:")
    if not marker or not head.strip():
        return {}, text
    envelope: dict[str, str] = {}
    for row in head.strip().splitlines():
        key, colon, value = row.partition(":")
        if not colon or not key.strip() or len(key) > 40:
            return {}, text  # not an envelope after all
        envelope[key.strip().lower().replace(" ", "_")] = value.strip()
    return envelope, payload.lstrip("\n")


def _all_str(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def patch_result(
    message: str | None, diff: str | None, status: ToolStatus, images: list[Any] | None = None
) -> ToolResult:
    """An ``apply_patch`` result (issue 11.6): the tool's own message ("Success. Updated the
    following files: …", or why it failed). The patch itself is the call's arguments, so it is
    not repeated; a unified diff Codex recorded (``patch_apply_end``) follows the message."""
    if diff is not None and status != "error":
        text = f"{message.rstrip()}\n{diff}" if message else diff
        return ToolResult(text=text, kind="diff", images=list(images or []))
    return text_result(message, images=list(images or []))


def _exec_changes(call: ToolCall | None, payload: Mapping[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    code = as_int(payload.get("exit_code"))
    if code is not None:
        changes["status"] = "success" if code == 0 else "error"
        changes["meta"] = {**(call.meta if call is not None else {}), "exit_code": code}
    duration = _duration_ms(payload.get("duration"))
    if duration is not None:
        changes["duration_ms"] = duration
    output = next(
        (payload[k] for k in ("aggregated_output", "formatted_output", "stdout")
         if isinstance(payload.get(k), str) and payload[k]),
        None,
    )  # fmt: skip
    if output is not None and (call is None or call.result is None):
        changes["result"] = text_result(output)
    return changes


def _patch_changes(payload: Mapping[str, Any], diff: str | None) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    success = payload.get("success")
    status: ToolStatus = "unknown"
    if isinstance(success, bool):
        status = "success" if success else "error"
        changes["status"] = status
    output = "\n".join(
        payload[k] for k in ("stdout", "stderr") if isinstance(payload.get(k), str) and payload[k]
    )
    if diff is not None or output:
        changes["result"] = patch_result(output or None, diff, status)
    return changes


def _mcp_changes(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Status, duration and result of an ``mcp_tool_call_end`` (``Ok``, ``Err``, ``isError``)."""
    outcome = payload.get("result")
    changes: dict[str, Any] = {}
    duration = _duration_ms(payload.get("duration"))
    if duration is not None:
        changes["duration_ms"] = duration
    if not isinstance(outcome, Mapping):
        return changes
    if "Err" in outcome:
        changes["status"] = "error"  # the transport failed: the tool never answered
        result = mcp.call_result({}, stringify(outcome["Err"]))
    else:
        ok = outcome.get("Ok")
        ok = ok if isinstance(ok, Mapping) else {}
        # MCP: an absent isError means the call did not fail.
        changes["status"] = "error" if ok.get("isError") is True else "success"
        result = mcp.call_result(ok)
    # An empty text says nothing the status does not: the output, if any, is the result.
    if result is not None and (result.text or result.images or result.structured is not None):
        changes["result"] = result
    return changes


def _mcp_item_changes(item: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`_mcp_changes` of an ``McpToolCall`` item (items.rs ``McpToolCallItem``,
    camelCase): its ``error`` is the end event's ``Err`` (the tool never answered), its
    ``result`` the ``Ok``; its ``status`` is Codex's own verdict on the call."""
    error = item.get("error")
    message = error.get("message") if isinstance(error, Mapping) else error
    result = item.get("result")
    outcome: Any = None
    if isinstance(message, str) and message:
        outcome = {"Err": message}
    elif isinstance(result, Mapping):
        outcome = {"Ok": result}
    changes = _mcp_changes({"result": outcome, "duration": item.get("duration")})
    status = _ITEM_STATUS.get(str(item.get("status")))
    if status is not None:
        changes["status"] = status
    return changes


def _dynamic_changes(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Status, duration and result of a dynamic tool call. ``dynamic_tool_call_response``
    (protocol.rs) and the ``DynamicToolCall`` item (items.rs) share ``success``,
    ``content_items``, ``error`` (why it failed before answering) and ``duration``; the
    item's ``status`` speaks when ``success`` is absent."""
    changes: dict[str, Any] = {}
    success = payload.get("success")
    status: ToolStatus | None = _ITEM_STATUS.get(str(payload.get("status")))
    if isinstance(success, bool):
        status = "success" if success else "error"
    if status is not None:
        changes["status"] = status
    duration = _duration_ms(payload.get("duration"))
    if duration is not None:
        changes["duration_ms"] = duration
    text, images = output_content(_dynamic_content(payload.get("content_items")))
    error = payload.get("error")
    said = [t for t in (text, error) if isinstance(t, str) and t]
    if said or images:
        changes["result"] = text_result("\n".join(said) or None, images=images)
    return changes


def _dynamic_content(items: Any) -> Any:
    """``content_items`` (dynamic_tools.rs: ``inputText {text}``, ``inputImage {imageUrl}``)
    as the parts :func:`output_content` reads."""
    if not isinstance(items, list):
        return None
    return [
        {"type": "input_image", "image_url": part.get("imageUrl")}
        if isinstance(part, Mapping) and part.get("type") == "inputImage"
        else part
        for part in items
    ]


def _skip(payload: Mapping[str, Any], line: int, timestamp: str | None) -> None:
    """Bookkeeping or an echo of an item already read."""


def _put(meta: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, str) and value:
        meta[key] = value


def _first_str(value: Any, keys: tuple[str, ...]) -> str | None:
    if not isinstance(value, Mapping):
        return None
    return next((value[k] for k in keys if isinstance(value.get(k), str) and value[k]), None)


def _summary_parts(item: Mapping[str, Any]) -> list[str]:
    summary = item.get("summary")
    if not isinstance(summary, list):
        return []
    return [p["text"] for p in summary if isinstance(p, Mapping) and isinstance(p.get("text"), str)]


def _mcp_blocks(value: Any) -> Any:
    """An MCP call's output as its content blocks, when Codex wrote them as a JSON string
    (rollouts of mid-2025: ``serde_json::to_string(&result.content)`` as the output), so they
    show as their text and images, not as escaped JSON; any other output as it is."""
    if not (isinstance(value, str) and value.startswith("[{")):
        return value
    try:
        blocks = codec.loads(value)
    except ValueError:
        return value
    if isinstance(blocks, list) and all(
        isinstance(block, dict) and str(block.get("type")) in mcp.BLOCK_TYPES for block in blocks
    ):
        return blocks
    return value


def _mcp_part(part: Mapping[str, Any]) -> str | ImageData | None:
    """A part of an MCP call's output, read as the content block it came from. Codex hands a
    text block on as ``input_text``, an image as an ``input_image`` data URL, and any other
    block as ``input_text`` holding the block's JSON (models.rs
    ``convert_mcp_content_to_items``); rollouts of mid-2025 hold the blocks themselves."""
    kind = part.get("type")
    if kind == "input_text" and isinstance(part.get("text"), str):
        text: str = part["text"]
        written = _written_block(text)
        return text if written is None else mcp.block(written)
    if isinstance(kind, str) and kind in mcp.BLOCK_TYPES:
        return mcp.block(part)
    shown, images = output_content([part])  # another Responses part: an image
    return images[0] if images else shown or None  # a part that reads as nothing: no line


#: The blocks Codex writes as JSON text: every kind but text (an image only when it lacks its
#: data), so that a tool's own JSON text (``{"type":"text",…}``) stays text.
_WRITTEN_BLOCKS = mcp.BLOCK_TYPES - {"text"}
_WRITTEN_MARKS = tuple(f'"type":"{kind}"' for kind in sorted(_WRITTEN_BLOCKS))


def _written_block(text: str) -> dict[str, Any] | None:
    """The block an ``input_text`` part holds as its JSON (``serde_json::to_string``: compact,
    the server's key order), None for any other text."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    if not any(mark in text for mark in _WRITTEN_MARKS):
        return None  # a tool's JSON text, not parsed for nothing
    try:
        value = codec.loads(text)
    except ValueError:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    return value if isinstance(kind, str) and kind in _WRITTEN_BLOCKS else None


def _joined(shown: str | None, more: str | None) -> str:
    """Two outputs of one call, one after the other, each starting on a line of its own.

    >>> _joined("Script completed\\nOutput:\\nok\\n", "note"), _joined("a", "b")
    ('Script completed\\nOutput:\\nok\\nnote', 'a\\nb')
    """
    if not shown:
        return more or ""
    if not more:
        return shown
    return shown + more if shown.endswith("\n") else f"{shown}\n{more}"


def _unwrap_output(value: Any) -> tuple[Any, bool | None]:
    """Newer rollouts may store the output payload as ``{"content": ..., "success": bool}``."""
    if isinstance(value, Mapping) and "type" not in value and "content" in value:
        success = value.get("success")
        return value["content"], success if isinstance(success, bool) else None
    return value, None


def _derived_status(
    call: ToolCall, text: str | None, facts: ExecOutput | None, success: bool | None
) -> ToolStatus:
    if text is not None and was_aborted(text):
        return "cancelled"
    if facts is not None and facts.exit_code is not None:
        return "success" if facts.exit_code == 0 else "error"
    if success is not None:
        return "success" if success else "error"
    if call.status in _FINISHED:
        return call.status  # an exec/patch/MCP end event or the abort already said
    if not text:
        return "unknown"
    if call.meta.get("code_mode"):
        if text.startswith(_CELL_FAILED):
            return "error"  # the script threw
        if text.startswith(_CELL_TERMINATED):
            return "cancelled"  # a wait stopped it
        printed = printed_status(text)
        if printed is not None:
            return printed
        if text.startswith(_CELL_COMPLETED):
            # The script ran to its end without throwing: Codex's own status of the cell
            # (core/src/tools/code_mode/execute_handler.rs ``code_cell_status``: "completed",
            # else "failed" with its error), 0.144 as 0.171. Its commands' exit codes, when it
            # printed them, were read above.
            return "success"
    if states_failure(text):
        return "error"
    if call.name in _AGENT_TOOLS:
        return "success"  # Codex answers its own agent tools: a result, or a failure message
    if call.name == _PLAN_TOOL and text == _PLAN_UPDATED:
        return "success"  # update_plan's one answer when the plan was taken (else why not)
    return "unknown"


def _spawn_output(text: str) -> dict[str, Any]:
    """What ``spawn_agent``'s JSON output says of the new agent."""
    if not text.lstrip().startswith("{"):
        return {}
    try:
        value = codec.loads(text)
    except ValueError:
        return {}
    found: dict[str, Any] = {}
    agent_id = _first_str(value, ("agent_id", "thread_id"))
    if agent_id:
        found["agent_id"] = agent_id
    name = _first_str(value, ("nickname", "agent_nickname", "name", "task_name"))
    if name:
        found["name"] = name
    return found


# --- detection and reading -------------------------------------------------------------------


def is_legacy_header(value: Any) -> bool:
    """The first line of an envelope-less rollout: ``{"id", "timestamp", "instructions"}``."""
    return (
        isinstance(value, Mapping)
        and "type" not in value
        and isinstance(value.get("id"), str)
        and "timestamp" in value
        and "instructions" in value
    )


def _is_envelope(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("type"), str)
        and value["type"] in ENVELOPE_TYPES
        and isinstance(value.get("payload"), Mapping)
        and "timestamp" in value
    )


def detect(source: Source) -> Evidence:
    """``{timestamp, type, payload}`` envelopes, or the legacy first line followed by bare
    response items."""
    values = source.head_values()
    legacy = bool(values) and is_legacy_header(values[0])

    def classify(value: Any) -> int:
        if _is_envelope(value) or is_legacy_header(value):
            return DISTINCTIVE
        if legacy and isinstance(value, Mapping) and ("type" in value or "record_type" in value):
            return READABLE
        return NOT_MINE

    return Evidence.of(values, classify, "no {timestamp, type, payload} envelope")


def read(source: Source) -> Transcript:
    """Every record of ``source`` fed to a :class:`CodexBuilder` in one pass."""
    return read_through(reader(source))


def reader(source: Source) -> _Pass:
    """A pass over ``source``'s records fed one at a time, which a growing file's scan can
    pause and resume (:mod:`turnfold.formats.resume`)."""
    return _Pass(source, depth=0, seen={source.path.resolve()} if source.path else set())


def record_type(record: Any) -> str:
    """The name a rollout line is accounted under: ``event_msg/token_count``, ``compacted``."""
    if isinstance(record, MalformedLine) or not isinstance(record, Mapping):
        return type_of_record(record)
    kind, payload = record.get("type"), record.get("payload")
    if isinstance(payload, Mapping):
        if kind in ("response_item", "event_msg"):
            inner = payload.get("type")
            return f"{kind}/{inner if isinstance(inner, str) else '(untyped)'}"
        return kind if isinstance(kind, str) else "(untyped)"
    if is_legacy_header(record):
        return "(legacy header)"
    if "record_type" in record:
        return f"record_type/{record['record_type']}"
    return f"response_item/{kind}" if isinstance(kind, str) else type_of_record(record)


class _Pass:
    """One rollout's records fed to a :class:`CodexBuilder`, then finished."""

    def __init__(
        self, source: Source, depth: int, seen: set[Path], above: frozenset[Path] = frozenset()
    ) -> None:
        self.source = source
        #: How many sub-agents deep this rollout is; the rollouts this load linked so far; the
        #: ones this rollout nests in (:meth:`CodexBuilder.finish`).
        self.depth, self.seen, self.above = depth, seen, above
        self.transcript = Transcript(metadata={"source_format": NAME})
        self.builder = CodexBuilder(self.transcript, source.name)
        self.first_line: int | None = None

    def feed(self, line: int, record: Any) -> None:
        """Read one record (the source's current one)."""
        warnings, builder = self.transcript.warnings, self.builder
        self.first_line = line if self.first_line is None else self.first_line
        # Counted, not measured: past the listed ones a warning adds nothing to the list.
        before = warning_count(warnings)
        if isinstance(record, MalformedLine):
            builder.warn(record.reason, line)
        else:
            builder.feed(record, line)
        # One account per line (issue 11): a warning on it, else what RECORDS says of its type;
        # a type RECORDS does not know was warned about on its first line.
        kind = record_type(record)
        self.source.note(
            kind,
            "warned" if warning_count(warnings) > before else RECORDS.disposition(kind) or "warned",
        )

    def finish(self) -> Transcript:
        """The transcript of the records fed; the pass takes no more after it."""
        source = self.source
        if self.builder.recognized == 0:
            reason = "no Codex rollout record ({timestamp, type, payload} lines)"
            raise TranscriptFormatError(source.name, [NAME], self.first_line, reason)
        self.builder.finish(
            source.path, self.depth, source=source, seen=self.seen, above=self.above
        )
        return self.transcript


def _load_file(
    path: Path, depth: int, seen: set[Path], above: frozenset[Path]
) -> tuple[Transcript, Source]:
    """A child thread's own rollout file, and its source (for the accounting). Read by
    recursion, some five frames a level: the bound of :data:`~turnfold.nesting.MAX_DEPTH`
    levels keeps a chain of rollouts within Python's stack."""
    source, stream = open_source(path)
    try:
        if not source.head:
            raise TranscriptFormatError(source.name, [NAME], None, "the source is empty")
        child = read_through(_Pass(source, depth, seen, above))
    finally:
        if stream is not None:
            stream.close()
    join_warnings(child.warnings, source.warnings, before=True)
    child.accounting = source.accounting
    return child, source
