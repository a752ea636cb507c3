"""Cline and Roo Code task histories (``api_conversation_history.json``; issue 13).

Cline (``saoudrizwan.claude-dev``) and its fork Roo Code (``rooveterinaryinc.roo-cline``) keep
each task in a folder ``…/globalStorage/<extension>/tasks/<id>/``: ``api_conversation_history.json``
is the Anthropic message list sent to the model, ``ui_messages.json`` what the chat panel showed
(``[{ts, type: "say" | "ask", say | ask, text}]``), ``task_metadata.json`` the files in context.

The message list is Anthropic's (read with :class:`~turnfold.formats.anthropic.AnthropicBuilder`),
with Cline's own conventions on top, written from Cline's ``src/core/Cline.ts`` (its
``pushToolResult``, ``toolDescription`` and ``loadContext``), ``assistant-message/`` (the tool
tags) and ``prompts/responses.ts`` (the result texts):

- older versions write a call as XML-style tags inside the assistant's text
  (``<read_file><path>a.ts</path></read_file>``; one tag per parameter, the value trimmed), and
  its result as user text blocks: a header ``[read_file for 'a.ts'] Result:`` followed by the
  output blocks. Each tag is a :class:`ToolCall` with its parameters as ``args``, paired with the
  next header naming it. Newer versions use ``tool_use`` / ``tool_result`` blocks, read as
  Anthropic's; a ``tool_use`` whose id Cline could not map (an OpenAI-compatible provider, say)
  gets its result as a header text block too (``ToolResultUtils``), paired the same way
  (``[subagents]`` / ``[subagent: name]`` name ``use_subagents``);
- a result reading ``The user denied this operation.``, or a call skipped after a denial
  (``Skipping tool … due to user rejecting a previous tool.``), is ``cancelled``; one starting
  ``The tool execution failed``, ``[ERROR]`` or a command's ``Command failed with exit code N.``
  / ``Command terminated by signal …`` is ``error``; any other is ``success``;
- ``attempt_completion`` (tag or ``tool_use``) is the final :class:`AssistantText` (its
  ``result``); ``plan_mode_respond`` is an :class:`AssistantText` of its ``response``;
  ``<thinking>`` in the text is :class:`Thinking`;
- an ``attempt_completion`` with a ``command`` (a demo for the user: ``open index.html``) also
  runs that command (``AttemptCompletionHandler`` → ``executeCommandTool``): it is an
  ``execute_command`` :class:`ToolCall` after the answer (id ``<tool_use id>#command``, or the
  tag's), and what comes back under the ``[attempt_completion] Result:`` header before the
  user's ``<feedback>`` is its result (``Command executed.`` / ``Command failed with exit code
  N.`` …, ``The user denied the command execution.`` → ``cancelled``), never the user's words.
  Feedback given while any command ran (``…\n\nThe user provided the following feedback:
  <feedback>…``, ``CommandOrchestrator``) is split off the result as the user's message;
- the first prompt is wrapped in ``<task>``, later words of the user in ``<feedback>``,
  ``<answer>`` or ``<user_message>``: each is a :class:`UserMessage` of the text inside (a
  question's answer, the result of its ``ask_followup_question`` call, is read without its
  ``<answer>`` tags: ``AskFollowupQuestionToolHandler``'s wrapping, not the user's words). The
  ``<environment_details>`` block Cline appends to every user turn (open tabs, terminals, the
  file list) is context the model saw, not the user's words: it is left out, but the workspace
  folder it names is ``metadata["cwd"]``; so are the focus chain's instructions (a block
  starting ``# task_progress`` or ``# TODO LIST UPDATE REQUIRED``) and, after
  ``attempt_completion``, Cline's ``Done`` and its sentence before the user's ``<feedback>``;
- ``[ERROR] You did not use a tool…`` (Cline nudging the model) is a warning
  :class:`SystemNotice`; ``[TASK RESUMPTION]`` an info one;
- the note Cline appends to the assistant's text when it cuts a response short (the stream loop
  and ``abortStream``, ``src/core/task/index.ts``) is Cline's, not the model's: ``[Response
  interrupted by user]`` (the user stopped the task) is an :class:`AbortMarker`, ``[Response
  interrupted by API Error]`` (the stream failed) an :class:`AssistantError` (the request's
  ``streamingFailedMessage`` when the panel beside kept it), and ``[Response interrupted by user
  feedback]`` (a call rejected) or ``… by a tool use result…`` (a second tool use) an info
  notice.

Times, usage and the model. Cline writes on each assistant message (``ClineStorageMessage``,
``src/shared/messages/content.ts``) ``modelInfo {modelId, providerId}`` (since v3.37; ``mode``,
``plan`` or ``act``, since v3.40) and ``metrics {tokens {prompt, completion, cached}, cost}``
(since v3.40: ``src/shared/messages/metrics.ts``, cline/cline 09692d7d), and newer versions
``ts`` (ms since the epoch) on every message, as Roo Code does. ``modelId`` is the model of the
message's :class:`AssistantText`; ``metrics`` is the usage of that one response, put where
:func:`~turnfold.usage.attach_usage` puts it (its last text, else its first reasoning or call),
and its ``cost`` that entry's ``meta["cost_usd"]``; the costs add up to
``metadata["cost_usd"]``. The last ``modelId`` and ``providerId`` are ``metadata["model"]``
and ``metadata["model_provider"]``.

When the history sits in its task folder (``ui_messages.json`` beside it), the
``api_req_started`` say messages there (JSON text with ``tokensIn``, ``tokensOut``,
``cacheReads``, ``cacheWrites``, ``cost``; one per API request) give each assistant message, in
order, the time of its request (when it has no ``ts``) and its usage, which tells cache reads
from writes where ``metrics`` lumps them together; their costs add up to
``metadata["cost_usd"]``. Each message's request is found by the panel's
``conversationHistoryIndex`` (:func:`_pair`): a request no saved response answered (one whose
task was killed mid-stream) still spent its tokens, added to the session's
(``metadata["usage"]``). Without those indexes (older versions) the requests are paired in
order, and only when their number is the assistant messages' (else a history truncated for
the context window): otherwise only their costs' total is kept. ``task_metadata.json``'s last
``model_usage`` entry gives ``metadata["model"]``, and the extension folder the task sits in
(``saoudrizwan.claude-dev``, ``rooveterinaryinc.roo-cline``) ``metadata["agent"]``
(``cline``, ``roo-code``).

Both count a request the way Cline's task loop adds up its handler's usage chunks
(``src/core/task/index.ts``: ``prompt``/``tokensIn`` is the sum of ``inputTokens``,
``cached`` of ``cacheWriteTokens + cacheReadTokens``), and what ``inputTokens`` holds depends
on the provider's handler (``src/core/api/providers/``): most report the prompt without its
cached tokens (Anthropic's ``input_tokens``; ``openrouter.ts``, ``cline.ts``, ``gemini.ts``,
``openai-native.ts`` subtract them), so they are added in; the OpenAI-compatible handlers of
:data:`PROMPT_HOLDS_CACHE` pass the API's ``prompt_tokens`` on, cached ones included. So
``metrics.ts``'s comment ("prompt: Total input tokens (includes cached + non-cached)") holds
only for those. ``cached`` cannot be split into reads and writes (and some of those handlers
count DeepSeek's cache misses in it), so a usage read from ``metrics`` has no cache counts; the
entry's ``meta["cached_tokens"]`` keeps the number.

A lone ``ui_messages.json`` (no history beside it: a user copied just that file) is read as
what the chat panel showed, with one warning that says so (:func:`read_panel`): ``say: task``
and ``user_feedback`` are the user's words (Roo Code and Kilo Code say the task as the panel's
first ``text``), ``text`` and ``completion_result`` the assistant's
(the latter its answer), ``reasoning`` thinking, ``error`` an error; ``say``/``ask`` ``command``
is an ``execute_command`` call whose output is the ``command_output`` after it; ``say``/``ask``
``tool`` a call of the tool its JSON names, by the name the model called it (the panel's
``readFile`` is ``read_file``, ``newFileCreated`` ``write_to_file``: :data:`_PANEL_TOOLS`, and
the header of its result, when a request sends one back, names it; its other fields the
arguments: an edit's ``content`` is its SEARCH/REPLACE diff, a new file's its text);
``say: diff_error`` an edit whose diff did not
apply (a ``replace_in_file`` call of the file it names: Cline shows no ``tool`` message for it);
``say``/``ask`` ``use_mcp_server`` a call of its ``type`` (``use_mcp_tool``,
``access_mcp_resource``; ``serverName``, ``toolName``, ``arguments``, ``uri`` its arguments),
whose result is the ``mcp_server_response`` after it; ``browser_action_launch`` (its URL) and
``browser_action`` (``{action, coordinate, text}``) a ``browser_action`` call, whose result is
the ``browser_action_result`` after it (the page's URL, console logs and screenshot);
``ask: followup`` the question (``{question, options}``; the option the user picked,
``selected``, their answer), ``ask: plan_mode_respond`` plan mode's answer the same way
(``{response, options, selected}``); Roo Code's ``subtask_result`` (the sub-task's answer) the
result of its ``new_task`` call, and ``condense_context`` and ``sliding_window_truncation`` a
:class:`CompactionBoundary`; ``use_subagents``, ``load_mcp_documentation`` and the asks
``new_task``, ``condense``, ``summarize_task``, ``report_bug`` calls of those tools
(:data:`_PANEL_CALLS`); a hook's status and output, the conditional rules applied info notices;
a path an ignore file kept from a tool, the terminal's missing shell integration, a command not
permitted and Roo Code's delayed retry warnings (:data:`_PANEL_WARNINGS`). A
request that failed is an ``error_retry`` warning per retry
and ``ask: api_req_failed`` an :class:`AssistantError` (its JSON's ``message``);
``ask: mistake_limit_reached`` (too many replies without a tool) a warning, ``say: info`` (yolo
mode answering a question itself) and ``ask: auto_approval_max_req_reached`` (Cline stopped to
ask before more auto-approved requests) info notices. Each ``api_req_started``
is a request: its ``request`` text opens with the results sent back (the ``[tool] Result:``
headers), which settle the calls before it in order (:func:`status_of`, a call's result the
header's text where the panel showed none); the results of a request that settles no call the
panel showed are calls of their own, named by their headers. The header of a question
(``ask_followup_question``) holds the answer the panel shows as the user's words, and the empty
result Cline adds after a failed call's (``(tool did not return anything)``) says nothing:
neither is a call's. A request that opens with Cline's nudge (``[ERROR] You did not use a
tool…``) or ``[TASK RESUMPTION]`` is that notice, as in the history. Its ``cancelReason`` says
how Cline cut the response after it short (``abortStream``; Cline 3.82's last usage update
may overwrite it, older versions kept it): ``user_cancelled`` an :class:`AbortMarker`,
``streaming_failed`` an :class:`AssistantError` of its ``streamingFailedMessage`` after the
response, unless the panel showed that error already (``api_req_failed``).
Its counts and cost are the usage of the response after it; when a response has no entry to
carry them (a question yolo mode answered), every request's counts are ``metadata["usage"]``.
What the panel alone says was spent counts too: ``subagent`` (the sub-agents a
``use_subagents`` call ran: their prompts and answers, the call's :class:`SubAgent` and result;
the call itself when the panel shows no other row of it, as for a call run without asking)
and ``subagent_usage`` (their requests' counts, that sub-agent's tokens, counted under the
call and not among the session's own; their cost the session's, as Cline's ``getApiMetrics``
adds it); ``deleted_api_reqs`` (Roo Code's ``api_req_deleted``: the requests a checkpoint
restore deleted with the messages after it, whose tokens and cost stay in the session's
totals, an info notice says so). Roo Code's ``codebase_search_result`` and ``image`` are the
results of the ``codebase_search`` and ``generate_image`` calls before them,
``too_many_tools_warning`` a warning and ``user_edit_todos`` (the user's change to a proposed
todo list) a notice. Other kinds are the panel's own state (``resume_task``,
``checkpoint_created``, Roo Code's rate-limit countdown…), left out.

A call waiting for the user's approval. Cline asks before a call it may not run on its own
(``ask: tool``, ``command``, ``use_mcp_server``, ``browser_action_launch``: the asks the panel
answers with Approve / Run Command and Reject, ``getButtonConfig`` in ``webview-ui/src/
components/chat/chat-view/shared/buttonConfig.ts``; one auto-approved is a ``say`` of the same
kind). Only the panel's last message can still wait: any later one means the user answered,
or resumed the task (``ask: resume_task``), which drops the call: a call whose ask the
resume follows never ran, and is ``cancelled``; so is, in the history beside the panel, a
question (``ask_followup_question``) whose ``ask: followup`` the resume follows: stopping the
task rejected the ask, so the call never got its answer or a result (:func:`_dropped`). So
when the panel's messages end with such an ask, no longer ``partial`` (one still streaming
was never put to the user), its call is ``confirming``, with a permission
:class:`PendingAction` after it; the same holds for the history beside such a panel, whose
last message is the assistant's with that call.

The panel beside the history also holds what the history does not (:func:`_unsaved`, by each
message's ``conversationHistoryIndex``): a request's retries and its failure, the mistake
limit's question, an error said after the history's last message, and the last response when
the history ends with the user's message (Cline saves a response only when its stream ends,
and the CLI stops at the answer it shows): these are read with the panel's rules and put after
the history message they followed.

The Cline CLI 2.x (Cline core 3.x) prints the same messages as JSON lines with ``--json``
(``cline --json "<prompt>"``: ``cli/src/utils/plain-text-task.ts`` and
``task-start-output.ts``, as the 2.18.0 package runs them), read with the same rules: a
``{"type": "task_started", "taskId"}`` line first (``metadata["session_id"]``), each message
once, when it is no longer partial (so ``api_req_started`` before its counts are known: the
output records no usage, and no ``diff_error``, which Cline writes partial), and a resumed task
(``-T <id>``) replays its earlier messages (their requests with their counts). The run ends
at ``completion_result``, or on an ``{"type": "error", "message"}`` line: the error the CLI
stopped on (``metadata["outcome"]`` ``"error"``), shown unless the message before it said it (a
failed request, a ``say: error``). A signal stops it with a line of its own among the JSON
(``setupSignalHandlers``: ``SIGINT received, shutting down...``, or SIGTERM, in yellow): an
:class:`AbortMarker` after the response Cline then flushes (``abortTask``), no invalid JSON.

Detection: a list of Anthropic messages with Cline's marks (``<task>``, ``<environment_details>``,
a ``[tool] Result:`` header, a tool tag in the assistant's text); the file's name
``api_conversation_history.json`` is one more mark, so Cline wins over plain ``anthropic``. A
list of the panel's messages, or JSON lines of them: ``{ts, type: "say" | "ask"}`` is Cline's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from turnfold import codec
from turnfold.formats import anthropic_blocks
from turnfold.formats.anthropic import AnthropicBuilder, role_of
from turnfold.formats.anthropic import _verdict as anthropic_verdict
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    UNSETTLED,
    NameSet,
    TranscriptBuilder,
    approval_text,
    as_int,
    counted_usage,
    describe_args,
    result_kind,
    text_result,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine
from turnfold.formats.openai_responses import data_url_image
from turnfold.formats.source import Source, read_file
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
)
from turnfold.usage import Tokens, add_into, count_tokens, counts_of, usage_carrier

NAME = "cline"
#: What Cline keeps its secrets in, in its data folder (``~/.cline/data``; ``$CLINE_DATA_DIR``,
#: else ``$CLINE_DIR/data``: ``resolveClineDataDir`` of ``@cline/shared``): the providers' keys
#: and its account's tokens (``secrets.json``), ``globalState.json`` beside it (the
#: OpenAI-compatible provider's ``openAiHeaders``), the providers' ``apiKey``, tokens and
#: ``headers`` (``settings/providers.json``), the MCP servers' ``env`` and ``headers``
#: (``settings/cline_mcp_settings.json``), and the connectors' tokens
#: (``connectors/settings.json``, the ``.migrated`` copy ``ConnectorStore`` leaves, and
#: ``db/connectors.db``; ``$CLINE_CONNECTOR_DATA_DIR`` and ``$CLINE_DB_DATA_DIR`` move those
#: two folders). ``~/.cline`` and ``$CLINE_DIR`` hold them under ``data/``, the folders the
#: other variables name right in them: every place is named in each folder, as one keeper
#: does, which passes over no session (none has those names). Four variables name one file
#: each, under any name: ``$CLINE_PROVIDER_SETTINGS_PATH`` (``providers.json``),
#: ``$CLINE_MCP_SETTINGS_PATH``, ``$CLINE_CONNECTOR_SETTINGS_PATH`` and
#: ``$CLINE_CONNECTORS_DB_PATH`` (``resolveProviderSettingsPath``, ``resolveMcpSettingsPath``,
#: ``resolveConnectorSettingsPath``, ``resolveConnectorsDbPath`` of
#: ``sdk/packages/shared/src/storage/paths.ts``).
CREDENTIALS = Credentials(
    folders=frozenset({".cline"}),
    files=frozenset({
        f"{inner}{name}"
        for inner in ("data/", "")
        for name in (
            "secrets.json", "globalState.json", "settings/providers.json",
            "settings/cline_mcp_settings.json", "connectors/settings.json",
            "connectors/settings.json.migrated", "db/connectors.db",
        )
    } | {"settings.json", "settings.json.migrated", "connectors.db"}),
    variables=frozenset({
        "CLINE_DIR", "CLINE_DATA_DIR", "CLINE_CONNECTOR_DATA_DIR", "CLINE_DB_DATA_DIR",
    }),
    file_variables=frozenset({
        "CLINE_PROVIDER_SETTINGS_PATH", "CLINE_MCP_SETTINGS_PATH",
        "CLINE_CONNECTOR_SETTINGS_PATH", "CLINE_CONNECTORS_DB_PATH",
    }),
)  # fmt: skip

RECORDS = Records(
    mapped={
        "user": "the task or the user's words (UserMessage), tool results (the [tool] Result: "
        "blocks or tool_result), Cline's notices; <environment_details> left out",
        "assistant": "text, <thinking>, tool calls (XML tags or tool_use), attempt_completion "
        "as the final answer; Cline's [Response interrupted by …] note a stop, an error or a "
        "notice",
        # A lone ui_messages.json: what the chat panel showed (read_panel).
        "say/task": "the task (UserMessage)",
        "say/user_feedback": "the user's words (UserMessage)",
        "say/text": "assistant text; Roo Code's and Kilo Code's task when it is the panel's "
        "first message",
        "say/reasoning": "thinking",
        "say/completion_result": "the assistant's answer",
        "say/error": "an error",
        "say/command": "an execute_command call",
        "ask/command": "an execute_command call; the panel's last message: it waits for approval",
        "say/command_output": "the running command's output",
        "ask/command_output": "the running command's output",
        "say/tool": "a call of the tool its JSON names",
        "ask/tool": "a call of the tool its JSON names; the panel's last message: the call "
        "waits for approval (confirming)",
        "say/use_mcp_server": "an MCP call (use_mcp_tool, access_mcp_resource)",
        "ask/use_mcp_server": "an MCP call; the panel's last message: it waits for approval",
        "ask/followup": "the assistant's question",
        "ask/plan_mode_respond": "plan mode's answer (assistant text); the option the user "
        "picked their words",
        "ask/act_mode_respond": "an answer (assistant text)",
        "say/mcp_server_response": "what the MCP call before it returned (its result)",
        "say/mcp_notification": "an MCP server's notification (an info notice)",
        "say/browser_action_launch": "a browser_action call launching its URL",
        "ask/browser_action_launch": "a browser_action call launching its URL; the panel's "
        "last message: it waits for approval",
        "say/browser_action": "a browser_action call (its JSON the arguments)",
        "say/browser_action_result": "what the browser action before it saw (its result: "
        "the URL, console logs, screenshot)",
        "say/subtask_result": "Roo Code: the sub-task's answer, the new_task call's result",
        "say/condense_context": "Roo Code: the context condensed (a compaction boundary)",
        "say/sliding_window_truncation": "Roo Code: the oldest messages dropped (a compaction "
        "boundary)",
        "say/clineignore_error": "a warning: .clineignore kept a tool from the path",
        "say/rooignore_error": "a warning: .rooignore kept a tool from the path",
        "say/shell_integration_warning": "a warning: the terminal's shell integration is off",
        "say/api_req_retry_delayed": "Roo Code: a warning: a failed request, retried after a delay",
        "say/condense_context_error": "Roo Code: condensing failed (a warning)",
        "say/user_feedback_diff": "the user's change to a proposed edit (a notice)",
        "ask/new_task": "a new_task call (its text the context)",
        "ask/condense": "a condense call (its text the context)",
        "ask/summarize_task": "a summarize_task call",
        "ask/report_bug": "a report_bug call (its JSON the arguments)",
        "say/use_subagents": "a use_subagents call ({prompts})",
        "ask/use_subagents": "a use_subagents call ({prompts}), asked of the user",
        "say/load_mcp_documentation": "a load_mcp_documentation call",
        "say/hook_status": "a hook runs (an info notice)",
        "say/hook_output_stream": "a hook's output (an info notice)",
        "say/conditional_rules_applied": "the rules applied (an info notice)",
        "say/command_permission_denied": "a warning: the command is not permitted",
        "say/diff_error": "a replace_in_file edit whose diff did not apply (a call)",
        "say/info": "an info notice (yolo mode answering a question itself)",
        "ask/auto_approval_max_req_reached": "an info notice: the auto-approved requests reached "
        "their limit, Cline asks before more",
        "say/error_retry": "a warning: a failed request, retried",
        "ask/api_req_failed": "an error: the request failed after its retries",
        "ask/mistake_limit_reached": "a warning: too many replies without a tool",
        "say/api_req_started": "a request: the results it sends settle the calls before it; "
        "its usage and cost go on the response after it; its cancelReason, how Cline cut that "
        "response short (user_cancelled: stopped; streaming_failed: an error)",
        "say/subagent": "the sub-agents a use_subagents call ran (their prompts, outcomes and "
        "answers): the call's sub-agent and result",
        "say/subagent_usage": "the sub-agents' tokens and cost: the use_subagents call's "
        "sub-agent's (counted once, apart from the session's own), their cost in the session's",
        "say/deleted_api_reqs": "the tokens and cost of the requests a checkpoint restore "
        "deleted: kept in the session's totals, an info notice says so",
        "say/api_req_deleted": "Roo Code: the same as deleted_api_reqs",
        "say/too_many_tools_warning": "Roo Code: a warning: too many MCP tools enabled",
        "say/codebase_search_result": "Roo Code: what the codebase_search call before it found "
        "(its result)",
        "say/user_edit_todos": "Roo Code: the user's change to a proposed todo list (a notice)",
        "say/image": "Roo Code: the image the generate_image call before it saved (its result)",
        # The CLI 2.x's --json output: the same messages as JSON lines, and these.
        "task_started": "the CLI's --json output: the task's id (session_id)",
        "error": "the CLI's --json output: the error it stopped on (shown unless the message "
        "before it said it)",
        "(signal line)": "the CLI's --json output: its non-JSON line 'SIGINT received, shutting "
        "down...' (or SIGTERM): the run stopped (a stop after what it flushed)",
    },
    ignored={
        "say/api_req_finished": "an old version's request end: api_req_started holds its counts",
        "say/checkpoint_created": "the panel's checkpoint marker",
        "ask/resume_task": "the panel's offer to resume the task",
        "ask/resume_completed_task": "the panel's offer to resume the finished task",
        "ask/completion_result": "the panel's prompt after the answer: say/completion_result "
        "holds it",
        "say/task_progress": "the focus chain's checklist as the panel showed it",
        "say/api_req_retried": "the panel's mark of a retried request: error_retry says it",
        "say/mcp_server_request_started": "the panel's mark of an MCP request: its "
        "use_mcp_server and mcp_server_response hold it",
        "say/checkpoint_saved": "Roo Code's checkpoint marker",
        "say/api_req_rate_limit_wait": "Roo Code's countdown while it waits out the configured "
        "rate limit: no error, and no content once it ends",
    },
)

#: The history's own file name, and the UI log written beside it.
HISTORY_NAME = "api_conversation_history.json"
UI_NAME = "ui_messages.json"
METADATA_NAME = "task_metadata.json"

#: The providers (``modelInfo.providerId``, ``ApiProvider`` in ``src/shared/api.ts``) whose
#: handler passes the API's ``prompt_tokens`` on as ``inputTokens``, cached tokens included, and
#: may report some (``src/core/api/providers/openai.ts``, ``openai-codex.ts``, ``xai.ts``,
#: ``zai.ts``, ``fireworks.ts``, ``doubao.ts``, ``qwen.ts``, ``hicap.ts``, ``lmstudio.ts``,
#: ``litellm.ts``, ``oca.ts``, ``requesty.ts``). Every other handler that reports cached tokens
#: leaves them out of ``inputTokens`` (module docstring).
PROMPT_HOLDS_CACHE = frozenset(
    {"openai", "openai-codex", "xai", "zai", "fireworks", "doubao", "qwen", "hicap", "lmstudio",
     "litellm", "oca", "requesty"}
)  # fmt: skip

#: Tool tags Cline (``toolUseNames``) and Roo Code write in the assistant's text.
TOOL_NAMES = NameSet(
    {"execute_command", "read_file", "write_to_file", "replace_in_file", "search_files",
     "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
     "access_mcp_resource", "ask_followup_question", "plan_mode_respond", "act_mode_respond",
     "attempt_completion", "new_task", "load_mcp_documentation", "web_fetch", "web_search",
     "condense", "summarize_task", "report_bug", "new_rule", "focus_chain", "apply_diff",
     "insert_content", "search_and_replace", "switch_mode", "fetch_instructions",
     "codebase_search", "update_todo_list", "run_slash_command", "generate_image",
     "use_subagents"}
)  # fmt: skip
#: Tools that are the assistant speaking, not acting: their text parameter is the reply.
_REPLIES = {"attempt_completion": "result", "plan_mode_respond": "response"}
_REPLY_TOOLS = NameSet(_REPLIES)
# Parameters whose value may hold its own closing tag (file contents, diffs): the last one ends it.
_GREEDY = ("content", "diff")

#: A tool's tag or a parameter's (``use_subagents``' ``<prompt_1>``).
_TAG = re.compile(r"<([a-z][a-z0-9_]*)>")
_PATH = re.compile(r"<path>(.*?)</path>", re.DOTALL)
#: ``[read_file for 'a.ts'] Result:``; Roo Code's also ``[new_task in Code mode: '…']`` and
#: ``[switch_mode to 'code' because: …]`` (``presentAssistantMessage``'s ``toolDescription``).
_HEADER = re.compile(r"\[([a-z_]+)(?: (?:for|in|to) .*?|: [^\]]*)?\] Result:", re.DOTALL)
#: A header that opens one of a request's blocks: Cline joins the blocks with a blank line
#: (``formatContentBlockToMarkdown(block)).join("\\n\\n")``) and puts a ``tool_result``'s content
#: after ``[Tool]`` (``export-markdown.ts``). A header elsewhere is some result's own text (a
#: file read that holds a Cline history), not a result of its own.
_BLOCK_HEADER = re.compile(
    r"(?:\A|(?<=\n\n)|(?<=\[Tool\]\n)|(?<=\[Tool \(Error\)\]\n))" + _HEADER.pattern, re.DOTALL
)
#: Headers that do not name their tool (``SubagentToolHandler.getDescription``: ``[subagents]``,
#: ``[subagent: <name>]``).
_HEADER_TOOLS = {"subagents": "use_subagents", "subagent": "use_subagents"}
_SKIPPED = re.compile(
    r"(?:Skipping tool \[([a-z_]+).*?due to user rejecting"
    r"|Tool \[([a-z_]+).*?(?:was interrupted and not executed|was not executed because))",
    re.DOTALL,
)
_WRAPPED = re.compile(r"<(task|feedback|answer|user_message)>\n?(.*?)\n?</\1>", re.DOTALL)
#: How Cline hands the user's answer to a question back to the model
#: (``AskFollowupQuestionToolHandler``: ``<answer>\n…\n</answer>``, one of its
#: ``USER_CONTENT_TAGS``): the wrapper is Cline's, the words inside the user's.
_ANSWER = re.compile(r"<answer>\n?(.*?)\n?</answer>", re.DOTALL)
_ENVIRONMENT = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.DOTALL)
#: Results saying the call did not run: a denied operation; attempt_completion's command
#: denied (``AttemptCompletionHandler``) or cancelled from the UI (``CommandOrchestrator``).
_DENIED = (
    "The user denied this operation.",
    "The user denied the command execution.",
    "Command cancelled.",
)
#: What Cline writes before the user's feedback (``formatResponse``, AttemptCompletionHandler,
#: which puts the sentence and ``<feedback>`` in blocks of their own).
_FEEDBACK_SENTENCES = ("The user provided the following feedback", "The user has provided feedback")
#: The focus chain's instructions to the model (``focus-chain/index.ts``, ``prompts.ts``), a
#: block of their own after the results: context, like ``<environment_details>``.
_FOCUS_CHAIN = ("# task_progress", "# TODO LIST UPDATE REQUIRED")
#: The result Cline sends for a call whose handler returned nothing (``pushToolResult``): it
#: also follows a failed edit's error, a second header for the same call.
NO_RESULT = "(tool did not return anything)"
#: attempt_completion's result when the user answers: ``[attempt_completion] Result: Done``.
_COMPLETION_MARK = "Done"
#: Where the user's feedback given while a command ran starts in that command's result.
_FEEDBACK_IN_RESULT = "\n\nThe user provided the following feedback:"
_CWD = re.compile(r"# Current Working Directory \((.+?)\) Files")
#: What Cline appends to the assistant's text when it cuts the stream short (the stream loop and
#: ``abortStream`` in ``src/core/task/index.ts``, the same words since v2): its words, not the
#: model's. ``user`` and ``API Error`` end the turn (the user cancelled; the stream failed);
#: ``user feedback`` (a call rejected) and ``a tool use result…`` (a second tool use) only cut
#: the rest of the response.
_INTERRUPTED = re.compile(
    r"\s*\[(Response interrupted by (user feedback|user|API Error|a tool use result)[^\]]*)\]\s*\Z"
)
_FAILED = (
    "The tool execution failed",
    "[ERROR]",
    # execute_command's own status line (CommandOrchestrator): "Command failed with exit code 1."
    "Command failed with exit code",
    "Command terminated by signal",
)
#: What Cline writes before an MCP tool's content when the server flagged it an error
#: (``(toolResult?.isError ? "Error:\\n" : "") + …``).
_MCP_FAILED = "Error:\n"


#: The asks that wait for the user's approval of a call: the panel shows Approve (Save, Run
#: Command) and Reject for them (``getButtonConfig``, module docstring).
APPROVAL_ASKS = NameSet({"tool", "command", "use_mcp_server", "browser_action_launch"})
#: The MCP requests an ``use_mcp_server`` message names (``ClineAskUseMcpServer.type``).
_MCP_REQUESTS = NameSet({"use_mcp_tool", "access_mcp_resource"})


def awaits_approval(message: Any) -> bool:
    """Whether ``message``, the panel's last, is an ask for approval still put to the user
    (not ``partial``: one still streaming was never asked)."""
    return (
        isinstance(message, Mapping)
        and message.get("type") == "ask"
        and message.get("ask") in APPROVAL_ASKS
        and message.get("partial") is not True
    )


def wait_for_approval(builder: TranscriptBuilder, call: ToolCall) -> None:
    """``call`` waits for the user's approval (``confirming``), the permission asked after it."""
    builder.transcript.append(builder.wait_on_user(call, "permission", approval_text(call.name)))


def cline_notice(text: str) -> SystemNotice | None:
    """Cline's own words to the model in a user turn: the nudge after a reply without a tool
    (``[ERROR] You did not use a tool…``, a warning) or a resumed task (``[TASK RESUMPTION]``),
    as a notice of its first line; None for any other text."""
    first = text.splitlines()[0] if text else ""
    if text.startswith("[ERROR]"):
        return SystemNotice(text=first, level="warning", subtype="no_tool_used")
    if text.startswith("[TASK RESUMPTION]"):
        return SystemNotice(text=first, level="info", subtype="task_resumption")
    return None


def interruption(words: str, cause: str) -> Entry:
    """What Cline's note that it cut a response short says (:data:`_INTERRUPTED`): the user
    stopped the turn (an :class:`AbortMarker`), the stream failed (an :class:`AssistantError`),
    or it cut the rest of the response (an info notice)."""
    if cause == "user":
        return AbortMarker(reason=words)
    if cause == "API Error":
        return AssistantError(message=words)
    return SystemNotice(text=words, level="info", subtype="response_interrupted")


def status_of(text: str | None, tool: str | None = None) -> ToolStatus:
    """The outcome Cline's result text says (``formatResponse.toolDenied`` / ``toolError``);
    of a ``use_mcp_tool`` call also the ``Error:`` line Cline puts before the content of a
    result the server flagged ``isError`` (``UseMcpToolHandler``)."""
    if not text:
        return "success"
    stripped = text.lstrip()
    if stripped.startswith(_DENIED):
        return "cancelled"
    if tool == "use_mcp_tool" and stripped.startswith(_MCP_FAILED):
        return "error"
    return "error" if stripped.startswith(_FAILED) else "success"


def parse_tool(body: str, name: str) -> dict[str, Any]:
    """The parameters of one tool tag's body: ``<path>a</path><content>…</content>``."""
    args: dict[str, Any] = {}
    at = 0
    while (match := _TAG.search(body, at)) is not None:
        param = match.group(1)
        close = f"</{param}>"
        start = match.end()
        end = body.rfind(close) if param in _GREEDY else body.find(close, start)
        if end < start:  # cut off mid-parameter (an interrupted stream): keep what was written
            args[param] = body[start:].strip()
            break
        args[param] = body[start:end].strip()
        at = end + len(close)
    nested = args.get("args")
    if nested is not None and "path" not in args:
        # Roo Code's read_file names its files inside <args><file><path>…</path></file></args>.
        paths = [m.strip() for m in _PATH.findall(nested)]
        if paths:
            args["paths"] = paths
    return args


def split_text(text: str) -> list[tuple[str, Any]]:
    """An assistant text as ``("text", str)``, ``("thinking", str)`` and ``("tool", (name,
    args))`` pieces in order (Cline's ``parseAssistantMessage``, thinking kept apart)."""
    pieces: list[tuple[str, Any]] = []
    done = 0  # the end of the last tag read
    at = 0
    while (match := _TAG.search(text, at)) is not None:
        name = match.group(1)
        at = match.end()
        if name != "thinking" and name not in TOOL_NAMES:
            continue
        if text[done : match.start()].strip():
            pieces.append(("text", text[done : match.start()].strip()))
        close = f"</{name}>"
        end = text.rfind(close) if name == "write_to_file" else text.find(close, match.end())
        body = text[match.end() : end if end >= match.end() else len(text)]
        if name == "thinking":
            if body.strip():
                pieces.append(("thinking", body.strip()))
        else:
            pieces.append(("tool", (name, parse_tool(body, name))))
        done = at = len(text) if end < match.end() else end + len(close)
    if text[done:].strip():
        pieces.append(("text", text[done:].strip()))
    return pieces


def _unwrap(text: str) -> str:
    """The user's words inside Cline's wrappers (``<task>``, ``<feedback>``…), the wrapping
    sentences dropped; text without a wrapper as it is."""
    found = [m.group(2).strip() for m in _WRAPPED.finditer(text)]
    return "\n\n".join(f for f in found if f) if found else text.strip()


def ms_to_iso(ms: Any) -> str | None:
    """A message's ``ts`` (ms since the epoch, as Cline 3 and the Cline 4 SDK write it) as
    ISO 8601; None when it is no time."""
    value = ms if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None
    if value is None or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


class ClineBuilder(AnthropicBuilder):
    """An :class:`AnthropicBuilder` that also reads Cline's tool tags and result texts."""

    def __init__(self, transcript: Transcript, source_name: str) -> None:
        super().__init__(transcript, source_name)
        self._waiting: list[ToolCall] = []  # calls written as tags, in order, awaiting a header
        self._replies: set[str] = set()  # tool_use ids of attempt_completion and the like
        #: attempt_completion's command calls, by the tool_use id of their attempt_completion.
        self._completion_commands: dict[str, ToolCall] = {}
        self._serial = 0

    # --- assistant ----------------------------------------------------------------------------

    def _model_of(self, message: Mapping[str, Any]) -> str | None:
        # Cline names the model in ``modelInfo`` (ClineStorageMessage), Anthropic in ``model``.
        own = super()._model_of(message)
        return own if own is not None else _model_info(message, "modelId")

    def _assistant_entry(
        self, block: Any, batch_id: str, model: str | None, line: int
    ) -> Entry | None:
        text = block if isinstance(block, str) else None
        if isinstance(block, Mapping) and block.get("type") == "text":
            text = block.get("text") if isinstance(block.get("text"), str) else ""
        if text is not None:
            return self._assistant_text(text, batch_id, model)
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            name, args = block.get("name"), block.get("input")
            if name in _REPLY_TOOLS and isinstance(args, Mapping):
                if isinstance(block.get("id"), str):
                    self._replies.add(block["id"])
                reply = args.get(_REPLIES[str(name)])
                entry = self._reply(reply if isinstance(reply, str) else "", model)
                own_id = block.get("id") if isinstance(block.get("id"), str) else None
                self._completion_command(name, args, own_id, batch_id)
                return entry
        entry = super()._assistant_entry(block, batch_id, model, line)
        if isinstance(entry, ToolCall):
            # Its result may come back as a text header: Cline writes one when the call's id
            # is not in its toolUseIdMap (ToolResultUtils.createToolResultBlock, id "cline").
            self._waiting.append(entry)
        return entry

    def _assistant_text(self, text: str, batch_id: str, model: str | None) -> Entry | None:
        last: Entry | None = None
        cut = _INTERRUPTED.search(text)
        if cut is not None:
            text = text[: cut.start()]
        for kind, value in split_text(text):
            if kind == "text":
                last = self._append(AssistantText(text=value, model=model))
            elif kind == "thinking":
                self._append(Thinking(text=value))
            else:
                name, args = value
                if name in _REPLY_TOOLS:
                    last = self._reply(args.get(_REPLIES[name], ""), model)
                    self._completion_command(name, args, None, batch_id)
                    continue
                self._serial += 1
                call = ToolCall(
                    call_id=f"{batch_id}-{name}-{self._serial}",
                    name=name,
                    args=args,
                    description=describe_args(name, args, self.cwd),
                    status=self.open_status,
                    batch_id=batch_id,
                )
                self._waiting.append(call)
                self._append(call)
        if cut is not None:
            self._append(interruption(cut.group(1), cut.group(2)))
        return last

    def _reply(self, text: str, model: str | None) -> Entry | None:
        return self._append(AssistantText(text=text.strip(), model=model)) if text.strip() else None

    def _completion_command(
        self, name: Any, args: Mapping[str, Any], own_id: str | None, batch_id: str
    ) -> None:
        """The command an ``attempt_completion`` runs to show its result, as a call of its own:
        the command's output comes back in the next user message, as attempt_completion's."""
        command = args.get("command") if name == "attempt_completion" else None
        if not isinstance(command, str) or not command.strip():
            return
        self._serial += 1
        call_args = {"command": command.strip()}
        call = ToolCall(
            call_id=f"{own_id}#command" if own_id else f"{batch_id}-{name}-{self._serial}",
            name="execute_command",
            args=call_args,
            description=describe_args("execute_command", call_args, self.cwd),
            status=self.open_status,
            batch_id=batch_id,
            meta={"completion_command": True},
        )
        if own_id:
            self._completion_commands[own_id] = call
        self._waiting.append(call)
        self._append(call)

    # --- user ---------------------------------------------------------------------------------

    def _feed_user(self, content: str | list[Any], line: int) -> None:
        blocks = [content] if isinstance(content, str) else content
        kept: list[Any] = []  # what the user said or attached, for AnthropicBuilder
        result: list[str] | None = None  # the output blocks after a header, while collecting
        target: ToolCall | None = None

        def settle() -> None:
            nonlocal result, target
            if result is not None and target is not None:
                if target.meta.get("completion_command"):
                    result = [t for t in result if t != _COMPLETION_MARK]
                text, feedback = _split_feedback("\n\n".join(result))
                text = _answered(target, text)
                status = status_of(text, target.name)
                self.transcript.update(target, status=status, result=text_result(text))
                if feedback:
                    kept.append(feedback)
            elif result:  # a header for no call (attempt_completion): the user's feedback
                # (not the empty result Cline adds after a failed call's: no one's words)
                kept.extend(_unwrap(t) for t in result if t not in (_COMPLETION_MARK, NO_RESULT))
            result, target = None, None

        for block in blocks:
            text = block if isinstance(block, str) else None
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text") if isinstance(block.get("text"), str) else None
            if text is None:
                if (
                    result is not None
                    and isinstance(block, Mapping)
                    and block.get("type") == "image"
                ):
                    result.append("[image]")
                    continue
                settle()
                kept.append(block)
                continue
            if "<environment_details>" in text:
                self._note_cwd(text)
                text = _ENVIRONMENT.sub("", text)
            text = text.strip()
            if not text or text.startswith(_FOCUS_CHAIN):
                continue
            header = _HEADER.match(text)
            if header is not None:
                settle()
                target = self._take(header.group(1))
                result = []
                rest = text[header.end() :].strip()
                if rest:
                    result.append(rest)
                continue
            if self._notice(text, settle):
                continue
            if text.startswith(_FEEDBACK_SENTENCES):
                settle()
                if _WRAPPED.search(text) is not None:
                    kept.append(_unwrap(text))
                # else Cline's sentence alone: the <feedback> block after it holds the words
                continue
            if result is not None:
                result.append(text)
            else:
                kept.append(_unwrap(text))
        settle()
        # Cline answers every call of an assistant message in the next user message: a call
        # still waiting was cut off (a resumed task), and a later header is not its result.
        self._waiting.clear()
        if kept:
            super()._feed_user(kept, line)

    def _note_cwd(self, text: str) -> None:
        """The workspace folder the first environment details name (``# Current Working
        Directory (/repo) Files``): ``metadata["cwd"]``, and what call descriptions are
        relative to."""
        if self.cwd is None and (found := _CWD.search(text)) is not None:
            self.cwd = found.group(1)
            self.transcript.metadata["cwd"] = self.cwd

    def _notice(self, text: str, settle: Any) -> bool:
        """Cline's own messages to the model: a skipped call, a nudge, a resumed task."""
        skipped = _SKIPPED.match(text)
        if skipped is not None:
            settle()
            call = self._take(skipped.group(1) or skipped.group(2))
            if call is not None:
                self.transcript.update(call, status="cancelled", result=text_result(text))
            return True
        notice = cline_notice(text)
        if notice is not None:
            settle()
            self._append(notice)
            return True
        return False

    def _take(self, name: str) -> ToolCall | None:
        """The first call named ``name`` (a tag, or a ``tool_use`` block) still waiting for
        its result; ``attempt_completion``'s header answers the command it ran."""
        if name == "attempt_completion":
            found = (i for i, c in enumerate(self._waiting) if c.meta.get("completion_command"))
        else:
            name = _HEADER_TOOLS.get(name, name)
            found = (i for i, c in enumerate(self._waiting) if c.name == name)
        index = next(found, None)
        return self._waiting.pop(index) if index is not None else None

    def _settle(self, block: Mapping[str, Any], line: int) -> None:
        call_id = block.get("tool_use_id")
        if isinstance(call_id, str) and call_id in self._replies:
            # attempt_completion's result: its command's output, if it ran one, then the
            # user's feedback on the answer, if any.
            content = block.get("content")
            parts = [content] if isinstance(content, str) else content
            texts = [
                b if isinstance(b, str) else b["text"]
                for b in (parts if isinstance(parts, list) else [])
                if isinstance(b, str) or (isinstance(b, Mapping) and isinstance(b.get("text"), str))
            ]
            command = self._completion_commands.get(call_id)
            said = self._completion_result(texts, command)
            if said:
                self._append(UserMessage(text=said))
            return
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            super()._settle(block, line)  # warns of the unknown id
            return
        self._waiting = [c for c in self._waiting if c is not call]
        status, result = anthropic_blocks.result_of(block)
        # Newer versions put the old header in the result's text: ``[read_file for 'a'] Result:``.
        text = result.text
        header = _HEADER.match(text) if text is not None else None
        if text is not None and header is not None:
            text = text[header.end() :].lstrip("\n")
            result = replace(result, text=text, kind=result_kind(text))
        feedback = None
        if text is not None and _FEEDBACK_IN_RESULT in text:
            text, feedback = _split_feedback(text)
            result = replace(result, text=text, kind=result_kind(text))
        if text != (answer := _answered(call, text)):
            text = answer
            result = replace(result, text=text, kind=result_kind(text))
        if status == "success":
            status = status_of(text, call.name)
        self.transcript.update(call, status=status, result=result)
        if feedback:
            self._append(UserMessage(text=feedback))

    def _completion_result(self, texts: list[str], command: ToolCall | None) -> str:
        """Settle ``command`` with the output in attempt_completion's result ``texts``; the
        user's words in them, returned."""
        output: list[str] = []
        said: list[str] = []
        for text in texts:
            text = text.strip()
            header = _HEADER.match(text)
            if header is not None:
                text = text[header.end() :].strip()
            if not text or text == _COMPLETION_MARK:
                continue
            if command is None or text.startswith(_FEEDBACK_SENTENCES) or _WRAPPED.match(text):
                said.append(_unwrap(text))
            else:
                output.append(text)
        if command is not None:
            self._waiting = [c for c in self._waiting if c is not command]
            result, feedback = _split_feedback("\n\n".join(output))
            if feedback:
                said.insert(0, feedback)
            if output:
                update = {"status": status_of(result), "result": text_result(result)}
                self.transcript.update(command, **update)
        return "\n\n".join(s for s in said if s)


def _answered(call: ToolCall, text: str | None) -> str | None:
    """A call's result text; a question's (``ask_followup_question``) the user's answer without
    Cline's ``<answer>`` wrapper (:data:`_ANSWER`), what else it holds (a file the user
    attached) kept."""
    if call.name != "ask_followup_question" or text is None:
        return text
    return _ANSWER.sub(lambda found: found.group(1), text, count=1)


def _split_feedback(text: str) -> tuple[str | None, str | None]:
    """A result, and the user's feedback given while the command ran (``CommandOrchestrator``:
    ``…\n\nThe user provided the following feedback:\n<feedback>…</feedback>``), apart."""
    at = text.find(_FEEDBACK_IN_RESULT)
    if at < 0:
        return text or None, None
    feedback = _unwrap(text[at + len(_FEEDBACK_IN_RESULT) :])
    return text[:at].strip() or None, feedback or None


# --- detection ----------------------------------------------------------------------------------


def _texts(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out = []
    for block in content:
        if isinstance(block, Mapping):
            if isinstance(block.get("text"), str):
                out.append(block["text"])
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                out += [b["text"] for b in block["content"] if isinstance(b, Mapping)
                        and isinstance(b.get("text"), str)]  # fmt: skip
    return out


def _has_marks(message: Mapping[str, Any]) -> bool:
    """Whether a message carries what only Cline writes."""
    role = message.get("role")
    for text in _texts(message):
        if role == "user" and (
            "<environment_details>" in text
            or text.lstrip().startswith("<task>")
            or _HEADER.match(text) is not None
        ):
            return True
        if role == "assistant" and any(
            m.group(1) in TOOL_NAMES and f"</{m.group(1)}>" in text for m in _TAG.finditer(text)
        ):
            return True
    return False


def _classify_line(value: Any) -> int:
    """A line of the CLI 2.x's ``--json`` output: a panel message (only Cline writes them), or
    the CLI's own ``task_started``/``error`` (shapes other programs print too)."""
    if _panel_kind(value) is not None:
        return DISTINCTIVE
    return READABLE if _cli_line(value) is not None else NOT_MINE


def detect(source: Source) -> Evidence:
    """A bare list of Anthropic messages with Cline's marks; its file name is one more. A list
    of the panel's messages (``ui_messages.json``), or JSON lines of them (the CLI 2.x's
    ``--json`` output)."""
    if not source.is_document:
        values = source.head_values()
        if not any(_panel_kind(v) for v in values):
            return Evidence.none("no Cline UI message")
        return Evidence.of(values, _classify_line, "")
    if not isinstance(source.document, list):
        return Evidence.none("not a message list")
    messages = source.document[:60]
    if any(_panel_kind(m) for m in messages):
        return Evidence.of(messages, lambda m: DISTINCTIVE if _panel_kind(m) else NOT_MINE, "")
    if not any(isinstance(m, Mapping) and _has_marks(m) for m in messages):
        return Evidence.none("no <task>, <environment_details> or [tool] Result: text")

    def classify(message: Any) -> int:
        verdict = anthropic_verdict(message)
        if verdict is False:
            return NOT_MINE
        # Every message Anthropic calls its own is Cline's too, so Cline's marks add to them.
        return DISTINCTIVE if verdict or _has_marks(message) else READABLE

    evidence = Evidence.of(messages, classify, "")
    if source.path is not None and source.path.name == HISTORY_NAME:
        return Evidence(share=evidence.share, marks=evidence.marks + 1)
    return evidence


# --- reading ------------------------------------------------------------------------------------


def _beside(path: Path | None, name: str) -> Any:
    """The JSON file ``name`` in the task folder of the history at ``path``; None when the
    history is not in a task folder, or the file is missing or unreadable (it only adds times,
    usage and the model, so the history still loads without it)."""
    if path is None or path.name != HISTORY_NAME:
        return None
    try:
        return codec.loads(path.with_name(name).read_bytes())
    except (OSError, ValueError):
        return None


def _requests(ui: Any) -> list[dict[str, Any]]:
    """The ``api_req_started`` infos of ``ui_messages.json``, each with its ``ts``, its line in
    the file and its ``conversationHistoryIndex`` (``index``)."""
    found = []
    for line, message in enumerate(ui if isinstance(ui, list) else [], start=1):
        if not isinstance(message, Mapping) or message.get("say") != "api_req_started":
            continue
        try:
            info = codec.loads(message.get("text") or "{}")
        except (ValueError, TypeError):
            info = {}
        info = info if isinstance(info, Mapping) else {}
        found.append({**info, "ts": message.get("ts"), "line": line, "index": _index_of(message)})
    return found


def _pair(requests: list[dict[str, Any]], messages: list[Any]) -> dict[int, dict[str, Any]]:
    """The request of each assistant message, by the message's index in the history.

    A request's ``conversationHistoryIndex`` is the history's last message before the request's
    own user message was added (``MessageStateHandler.addToClineMessages``), so the request of
    the assistant message at ``k`` is the last one said since the previous response was saved,
    with an index below ``k``: a request that got no response (the last, its answer never
    saved; one whose task was killed mid-stream) is no message's. Without those indexes (older
    versions) the requests are paired in order, and only when there is one per response."""
    answers = [
        at for at, m in enumerate(messages)
        if isinstance(m, Mapping) and m.get("role") == "assistant"
    ]  # fmt: skip
    if not requests:
        return {}
    if not all(r["index"] is not None for r in requests):
        return dict(zip(answers, requests, strict=True)) if len(answers) == len(requests) else {}
    paired: dict[int, dict[str, Any]] = {}
    previous = -1
    for at in answers:
        said = [r for r in requests if previous <= r["index"] < at]
        if said:
            paired[at] = said[-1]
        previous = at
    return paired


def _task_time(ui: Any, warn: Callable[[str], object]) -> str | None:
    """When the task was given: the ``say: "task"`` message that opens ``ui_messages.json``
    (a ``ts`` that is no time said to ``warn``)."""
    first = ui[0] if isinstance(ui, list) and ui else None
    if not isinstance(first, Mapping) or first.get("say") != "task":
        return None
    return warned_timestamp(first.get("ts"), ms_to_iso, warn, f"{UI_NAME} message 1",
                            name="ts", unit="ms since the epoch")  # fmt: skip


def _model(metadata: Any) -> str | None:
    """The last model ``task_metadata.json``'s ``model_usage`` names."""
    usage = metadata.get("model_usage") if isinstance(metadata, Mapping) else None
    models = (
        [u.get("model_id") for u in usage if isinstance(u, Mapping)]
        if isinstance(usage, list)
        else []
    )
    models = [m for m in models if isinstance(m, str) and m]
    return models[-1] if models else None


#: The extension folders under VS Code's ``globalStorage``, by agent (``…/<id>/tasks/<task>/``).
_EXTENSIONS = {"saoudrizwan.claude-dev": "cline", "rooveterinaryinc.roo-cline": "roo-code"}


def _agent(path: Path | None) -> str | None:
    """Which extension wrote the history, from the folder it sits in."""
    if path is None or len(path.parts) < 4 or path.parts[-3] != "tasks":
        return None
    return _EXTENSIONS.get(path.parts[-4].lower())


def _model_info(message: Any, key: str) -> str | None:
    """``modelInfo[key]`` of a message (``modelId``, ``providerId``); None when it names none."""
    info = message.get("modelInfo") if isinstance(message, Mapping) else None
    value = info.get(key) if isinstance(info, Mapping) else None
    return value if isinstance(value, str) and value else None


def _request_usage(info: Mapping[str, Any], provider: str | None) -> Usage | None:
    """The usage an ``api_req_started`` message records: its cache reads and writes added to
    ``tokensIn`` unless the provider's handler counted them in it (:data:`PROMPT_HOLDS_CACHE`)."""
    return usage_from(
        info, cache_apart=provider not in PROMPT_HOLDS_CACHE, input_tokens="tokensIn",
        output_tokens="tokensOut", cache_read_tokens="cacheReads", cache_write_tokens="cacheWrites",
    )  # fmt: skip


def _message_usage(message: Mapping[str, Any]) -> tuple[Usage | None, int | None]:
    """The usage an assistant message's ``metrics.tokens`` records, and its ``cached`` count.

    ``prompt`` is the task loop's ``inputTokens`` and ``cached`` its ``cacheWriteTokens +
    cacheReadTokens`` (``src/core/task/index.ts``); ``cached`` is added to ``prompt`` unless
    the provider's handler already counted it there (:data:`PROMPT_HOLDS_CACHE`). Reads and
    writes lumped together are neither count of a :class:`Usage`."""
    metrics = message.get("metrics")
    tokens = metrics.get("tokens") if isinstance(metrics, Mapping) else None
    if not isinstance(tokens, Mapping):
        return None, None
    prompt, cached = as_int(tokens.get("prompt")), as_int(tokens.get("cached"))
    if (
        prompt is not None
        and cached
        and _model_info(message, "providerId") not in PROMPT_HOLDS_CACHE
    ):
        prompt += cached
    return counted_usage(prompt, tokens.get("completion")), cached


def _cost(value: Any) -> float | None:
    """A request's cost in US dollars (``metrics.cost``, ``api_req_started``'s ``cost``)."""
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and 0 <= value < float("inf")
    ):
        return float(value)
    return None


def detect_path(path: Path) -> Evidence | None:
    """A task folder (``tasks/<id>/``), told by its history or, without one, its chat panel
    (``api_conversation_history.json``, ``ui_messages.json``): ``load(folder)`` reads it as a
    scan reads the folder's one row. None for a file, which is read as JSON records."""
    if not path.is_dir():
        return None
    held = (path / HISTORY_NAME).is_file() or (path / UI_NAME).is_file()
    return Evidence(share=1.0, marks=2) if held else None


def read_path(path: Path) -> Transcript:
    """A task folder read as its history is (its panel and metadata beside it), or its panel
    where the folder holds no history; a file (``load(path, format="cline")``) as its records."""
    if not path.is_dir():
        return read_file(path, read)
    history = path / HISTORY_NAME
    return read_file(history if history.is_file() else path / UI_NAME, read)


def read(source: Source) -> Transcript:
    """Every message fed to a :class:`ClineBuilder`, with the usage, cost and model each
    assistant message records; times and usage from ``ui_messages.json`` beside the file when
    there is one."""
    if not source.is_document:  # the CLI 2.x's --json output: the panel's messages as lines
        return read_panel(source, source.records(), printed=True)
    messages = source.document if isinstance(source.document, list) else [source.document]
    if any(_panel_kind(m) for m in messages[:60]):
        return read_panel(source, enumerate(messages, start=1))
    transcript = Transcript(metadata={"source_format": NAME})
    builder = ClineBuilder(transcript, source.name)
    ui = _beside(source.path, UI_NAME)
    requests = _requests(ui)
    agent = _agent(source.path)
    if agent is not None:
        transcript.metadata["agent"] = agent
    paired = _pair(requests, messages)
    costs: list[float] = []  # metrics.cost of each assistant message that records one
    model = provider = None  # the last modelInfo's
    added: list[Entry] = []  # the entries of the message last fed
    unsaved, tail = _unsaved(ui, messages)
    dropped = _dropped(ui, messages)
    for line, message in enumerate(messages, start=1):
        before = len(transcript.entries)
        builder.feed_noted(source, message, line, role_of(message))
        added = transcript.entries[before:]
        if line - 1 in dropped and (call := _waiting_call(message, added)) is not None:
            transcript.update(call, status="cancelled")
        stamp = None
        if isinstance(message, Mapping):
            stamp = warned_timestamp(
                message.get("ts"), ms_to_iso, partial(source.warn, line=line),
                f"message {line}", name="ts", unit="ms since the epoch",
            )  # fmt: skip
        if line == 1:
            # The task was given when the panel said it (``say: task``), a second or more
            # before the history stamps its first message (when the first request is built).
            stamp = _task_time(ui, source.warn) or stamp
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            own_provider = _model_info(message, "providerId")
            model = _model_info(message, "modelId") or model
            provider = own_provider or provider
            usage, cached = _message_usage(message)
            metrics = message.get("metrics")
            cost = _cost(metrics.get("cost") if isinstance(metrics, Mapping) else None)
            if cost is not None:
                costs.append(cost)
            info = paired.get(line - 1)
            if info is not None:
                stamp = stamp or warned_timestamp(
                    info.get("ts"), ms_to_iso, source.warn, f"{UI_NAME} message {info['line']}",
                    name="ts", unit="ms since the epoch",
                )  # fmt: skip
                # The same request's counts, with cache reads and writes apart.
                request = _request_usage(info, own_provider)
                usage, cached = (request, None) if request is not None else (usage, cached)
                cost = _cost(info.get("cost")) if cost is None else cost
            carrier = usage_carrier(added)
            own = getattr(carrier, "usage", None)  # Anthropic's own ``usage`` wins
            if carrier is not None and usage is not None and own is None:
                transcript.update(carrier, usage=usage)
            if carrier is not None:
                if cached:
                    carrier.meta["cached_tokens"] = cached
                if cost is not None:
                    carrier.meta["cost_usd"] = cost
            _stream_failure(transcript, added, info)
        for entry in added:
            if stamp and entry.timestamp is None:
                transcript.update(entry, timestamp=stamp)
        if line - 1 in unsaved:
            transcript.extend(_panel_entries(source, unsaved[line - 1]))
    answered = {r["line"] for r in paired.values()}
    if tail:
        shown = _panel_entries(source, tail)
        transcript.extend(shown)
        if any(getattr(e, "usage", None) is not None for e in shown):
            answered |= {line for line, _ in tail}  # its request's usage is on its response
    unanswered: Tokens = {}
    for asked in requests:
        if asked["line"] not in answered:
            add_into(unanswered, counts_of(_request_usage(asked, provider)))
    # What the panel alone says was spent: the requests a checkpoint restore deleted (their
    # messages gone from the history too), and the sub-agents' own requests.
    panel_costs: list[float] = []
    for said in _said(ui, _DELETED_REQUESTS):
        _count_deleted(_json_of(said.get("text")), provider, unanswered, panel_costs)
    panel_costs += _subagents_beside(transcript, ui, provider)
    if any(unanswered.values()):
        # A request no saved response answered still spent its tokens: the session's are
        # every response's and these.
        totals = count_tokens(transcript.entries)
        add_into(totals, unanswered)
        transcript.metadata["usage"] = totals
    if requests:
        transcript.metadata["api_requests"] = len(requests)
        # Every request's, those of messages cut from a truncated history too.
        costs = [c for r in requests if (c := _cost(r.get("cost"))) is not None] or costs
    costs += panel_costs
    if costs:
        transcript.metadata["cost_usd"] = round(sum(costs), 6)
    waiting = _waiting_call(messages[-1] if messages else None, added)
    if waiting is not None and isinstance(ui, list) and ui and awaits_approval(ui[-1]):
        wait_for_approval(builder, waiting)
    model = _model(_beside(source.path, METADATA_NAME)) or model
    for key, value in (("model", model), ("model_provider", provider)):
        if value is not None:
            transcript.metadata[key] = value
    return transcript


#: A checkpoint restore's record of the requests it deleted: Cline's, and Roo Code's name for it.
_DELETED_REQUESTS = ("say/deleted_api_reqs", "say/api_req_deleted")
#: What only the panel records, never the history: a request's retries and its failure, the
#: mistake limit's question to the user, a checkpoint restore's deleted requests.
_PANEL_ONLY = NameSet(
    {"say/error_retry", "ask/api_req_failed", "ask/mistake_limit_reached", *_DELETED_REQUESTS}
)


def _said(ui: Any, kinds: Iterable[str]) -> list[Mapping[str, Any]]:
    """The panel's messages of ``kinds``, in order."""
    wanted = set(kinds)
    return [m for m in ui if _panel_kind(m) in wanted] if isinstance(ui, list) else []


def _subagents_beside(transcript: Transcript, ui: Any, provider: str | None) -> list[float]:
    """The sub-agents the history's ``use_subagents`` calls ran, from the panel beside it: each
    ``subagent`` message, in order, the :class:`SubAgent` of the call it follows (its result
    is the history's), each ``subagent_usage`` its tokens (:func:`_subagents_spent`, the
    session's sub-agents' when the calls and the panel's messages do not pair); their costs."""
    calls = [c for c in transcript.tool_calls() if c.name == "use_subagents"]
    ran = [_json_of(m.get("text")) for m in _said(ui, ("say/subagent",))]
    if len(ran) == len(calls):
        for call, said in zip(calls, ran, strict=True):
            if isinstance(said, Mapping):
                transcript.update(call, subagent=_subagents_ran(call, said)["subagent"])
    spent = [_json_of(m.get("text")) for m in _said(ui, ("say/subagent_usage",))]
    paired = len(spent) == len(calls)
    costs = []
    for at, said in enumerate(spent):
        said = said if isinstance(said, Mapping) else {}
        cost = _subagents_spent(transcript, calls[at] if paired else None, said, provider)
        if cost is not None:
            costs.append(cost)
    return costs


def _stream_failure(
    transcript: Transcript, added: list[Entry], request: Mapping[str, Any] | None
) -> None:
    """The error of a response whose stream failed (Cline's note, :func:`interruption`) is what
    its request recorded (``streamingFailedMessage``), when the panel kept it."""
    said = request.get("streamingFailedMessage") if request is not None else None
    if not isinstance(said, str) or not said:
        return
    for entry in added:
        if isinstance(entry, AssistantError):
            transcript.update(entry, message=_error_message(said))


def _index_of(message: Mapping[str, Any]) -> int | None:
    """A panel message's ``conversationHistoryIndex``: the index of the history's last message
    when the panel wrote it (``MessageStateHandler.addToClineMessages``); None if not recorded."""
    index = message.get("conversationHistoryIndex")
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def _unsaved(
    ui: Any, history: list[Any]
) -> tuple[dict[int, list[tuple[int, Any]]], list[tuple[int, Any]]]:
    """What the panel beside the history showed that the history does not hold, as ``(line,
    message)`` pairs of ``ui_messages.json``: by the index of the history message each came
    after, and the response the history never got.

    Cline saves a response to the history only when its stream ends
    (``recursivelyMakeClineRequests``), after the panel showed it, and the CLI stops at the
    ``completion_result`` it shows: so when the history ends with the user's message, the
    panel's messages after the last request, written while that was the history's last, are
    the response (its answer), with the request's usage (the request before them, its results
    already read from the history, is kept with its text left out). Elsewhere the panel alone
    records a request's retries and failure, the mistake limit's question (:data:`_PANEL_ONLY`),
    and an error said after the history's last message (yolo mode giving up)."""
    panel = [
        (line, m) for line, m in enumerate(ui if isinstance(ui, list) else [], start=1)
        if _panel_kind(m) is not None
    ]  # fmt: skip
    last = len(history) - 1
    if last < 0 or not any(_index_of(m) is not None for _, m in panel):
        return {}, []
    kinds = [_panel_kind(m) for _, m in panel]
    start = max((at + 1 for at, k in enumerate(kinds) if k == "say/api_req_started"), default=0)
    ends_with_user = isinstance(history[-1], Mapping) and history[-1].get("role") == "user"
    after: dict[int, list[tuple[int, Any]]] = {}
    tail: list[tuple[int, Any]] = []
    for at, ((line, message), kind) in enumerate(zip(panel, kinds, strict=True)):
        index = _index_of(message)
        if index is None:
            continue
        late = at >= start and index >= last
        if late and ends_with_user:
            tail.append((line, message))
        elif kind in _PANEL_ONLY or (late and kind == "say/error"):
            after.setdefault(min(max(index, 0), last), []).append((line, message))
    request = panel[start - 1] if tail and start > 0 else None
    if request is not None and _index_of(request[1]) == last - 1:
        info = _json_of(request[1].get("text"))
        info = {**(info if isinstance(info, Mapping) else {}), "request": ""}
        tail.insert(0, (request[0], {**request[1], "text": codec.dumps(info)}))
    return after, tail


def _panel_entries(source: Source, messages: list[tuple[int, Any]]) -> list[Entry]:
    """The entries of some of the panel's ``messages``, read with :func:`read_panel`'s rules;
    what they warn of is the source's, naming ``ui_messages.json``."""
    name = str(source.path.with_name(UI_NAME)) if source.path is not None else source.name
    panel = Source(name, iter(()), warnings=source.warnings)
    entries = read_panel(panel, messages, beside_history=True).entries
    for entry in entries:
        entry.id = ""  # a fresh id in the history's transcript
    return entries


#: The asks that put a call to the user: its approval (:data:`APPROVAL_ASKS`) or its question.
_USER_ASKS = NameSet({*APPROVAL_ASKS, "followup"})


def _dropped(ui: Any, history: list[Any]) -> set[int]:
    """The history's assistant messages (their indexes) whose last call waited for the user when
    the task stopped: the panel's message before a resume (``ask: resume_task``) is that call's
    ask, its approval or its question (``followup``).

    Stopping the task rejects the ask (``abortTask``: ``ask()`` throws "Cline instance
    aborted"), so the call's handler never ran it, or never got its answer, and never returned
    a result; the resumed task tells the model to assume it did not succeed
    (``formatResponse.taskResumption``). Such a call is ``cancelled``, as in :func:`read_panel`.
    The ask's ``conversationHistoryIndex`` is the response's user message, or the response
    itself once it was saved."""
    found: set[int] = set()
    before: Any = None  # the last message the panel showed other than a resume
    for message in ui if isinstance(ui, list) else []:
        kind = _panel_kind(message)
        if kind is None:
            continue
        if kind not in _RESUMES:
            before = message
            continue
        index = _index_of(before) if isinstance(before, Mapping) else None
        if index is None or before.get("type") != "ask" or before.get("ask") not in _USER_ASKS:
            continue
        for at in (index + 1, index):
            if 0 <= at < len(history) and role_of(history[at]) == "assistant":
                found.add(at)
                break
    return found


def _waiting_call(last: Any, added: list[Entry]) -> ToolCall | None:
    """The call that may wait for approval: the last call of the history's last message (its
    entries ``added``) when that is the assistant's and the call has no outcome; None when the
    history ends otherwise (the results sent back, the user's words)."""
    if not isinstance(last, Mapping) or last.get("role") != "assistant":
        return None
    calls = [entry for entry in added if isinstance(entry, ToolCall)]
    call = calls[-1] if calls else None
    return call if call is not None and call.status in UNSETTLED and call.result is None else None


# --- a lone ui_messages.json: what the chat panel showed ----------------------------------------


def _panel_kind(message: Any) -> str | None:
    """``say/<kind>`` or ``ask/<kind>`` of a ``ClineMessage`` (``src/shared/ExtensionMessage.ts``:
    ``{ts, type: "say" | "ask", say | ask, text}``); None for anything else."""
    if not isinstance(message, Mapping) or not isinstance(message.get("ts"), (int, float)):
        return None
    kind = message.get("type")
    if kind not in ("say", "ask"):
        return None
    which = message.get(kind)
    return f"{kind}/{which}" if isinstance(which, str) and which else None


def _cli_line(value: Any) -> str | None:
    """``task_started`` or ``error``: the lines the CLI 2.x's ``--json`` output adds to the
    panel's messages (``emitTaskStartedMessage``: ``{type: "task_started", taskId}``;
    ``runPlainTextTask``: ``{type: "error", message}``); None for anything else."""
    if not isinstance(value, Mapping) or "ts" in value:
        return None
    kind = value.get("type")
    if kind == "task_started" and isinstance(value.get("taskId"), str):
        return "task_started"
    if kind == "error" and isinstance(value.get("message"), str):
        return "error"
    return None


_PANEL_IGNORED = frozenset(RECORDS.ignored)
#: The panel's warnings, each with the words it says alone and before its text: the ignore
#: file kept a tool from a path (its text; the call's result says so too), the terminal's shell
#: integration is off, Roo Code waits before retrying a failed request.
_PANEL_WARNINGS = {
    "say/clineignore_error": (
        "reader.blocked_by_clineignore", "reader.blocked_by_clineignore.said"
    ),
    "say/rooignore_error": ("reader.blocked_by_rooignore", "reader.blocked_by_rooignore.said"),
    "say/shell_integration_warning": (
        "reader.shell_integration_unavailable", "reader.shell_integration_unavailable.said"
    ),
    "say/api_req_retry_delayed": (
        "reader.request_failed_retrying", "reader.request_failed_retrying.said"
    ),
    "say/command_permission_denied": (
        "reader.command_not_permitted", "reader.command_not_permitted.said"
    ),
    "say/condense_context_error": (
        "reader.condensing_context_failed", "reader.condensing_context_failed.said"
    ),
}  # fmt: skip
#: The calls the panel shows as kinds of their own (their handlers' ``ask``/``say``): the tool
#: called.
_PANEL_CALLS = {
    "ask/new_task": "new_task", "ask/condense": "condense", "ask/summarize_task": "summarize_task",
    "ask/report_bug": "report_bug", "say/use_subagents": "use_subagents",
    "ask/use_subagents": "use_subagents", "say/load_mcp_documentation": "load_mcp_documentation",
}  # fmt: skip
#: Plan mode's answer, asked of the user (Act Mode Respond says ``text``).
_RESPONDS = ("ask/plan_mode_respond", "ask/act_mode_respond")
#: The images an MCP tool returned, appended to the panel's text (``\n\ndata:image/…``).
_MCP_IMAGE = re.compile(r"\n\n(data:image/[\w.+-]+;base64,[A-Za-z0-9+/=]+)")
#: What a browser action's result holds besides its screenshot, as its result's lines.
_BROWSER_SEEN = (("currentUrl", "URL"), ("logs", "console logs"))
_RESUMES = ("ask/resume_task", "ask/resume_completed_task")
_MCP_KINDS = ("say/use_mcp_server", "ask/use_mcp_server")
#: The panel's names of the tools whose calls it shows as ``say``/``ask`` ``tool``
#: (``ClineSayTool.tool``: Cline's ``src/shared/ExtensionMessage.ts``, Roo Code's and Kilo
#: Code's ``packages/types/src/vscode-extension-host.ts``) that are not the tool's name in
#: camelCase (``readFile``: ``read_file``): the name the model called it by. ``write_to_file``
#: and ``replace_in_file`` both show an existing file as ``editedExistingFile`` (Cline's
#: ``WriteToFileToolHandler``; Roo Code's is ``write_to_file``'s only): an edit whose content is
#: a SEARCH/REPLACE diff is ``replace_in_file`` (:func:`_panel_tool`). The header of the result
#: the next request sends names the tool itself, and wins (:func:`_settle`).
_PANEL_TOOLS = {
    "newFileCreated": "write_to_file", "editedExistingFile": "write_to_file",
    "appliedDiff": "apply_diff", "listFilesTopLevel": "list_files",
    "listFilesRecursive": "list_files", "imageGenerated": "generate_image",
    "fileDeleted": "apply_patch",
}  # fmt: skip
_SEARCH_MARKS = ("------- SEARCH", "<<<<<<< SEARCH")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
#: Where the results in a request's text end: the blocks Cline adds after them.
_AFTER_RESULTS = re.compile(
    r"\n\n(?:# task_progress|# TODO LIST UPDATE REQUIRED|<environment_details>)"
)
#: Headers whose result is no call's: the question's answer (the panel shows the user's words)
#: and the replies' (the panel shows the answer and what the user said to it).
_NO_CALL_HEADERS = NameSet({"ask_followup_question", *_REPLIES, "act_mode_respond"})


def _panel_tool(named: str, args: Mapping[str, Any]) -> str:
    """The tool the panel's ``ClineSayTool.tool`` kind ``named`` shows a call of
    (:data:`_PANEL_TOOLS`)."""
    if named == "editedExistingFile":
        edit = args.get("diff") or args.get("content")
        if isinstance(edit, str) and edit.lstrip().startswith(_SEARCH_MARKS):
            return "replace_in_file"
    return _PANEL_TOOLS.get(named) or _CAMEL.sub(r"_\1", named).lower()


def _json_of(text: Any) -> Any:
    try:
        return codec.loads(text) if isinstance(text, str) and text.lstrip()[:1] in "{[" else None
    except ValueError:
        return None


#: The line the CLI 2.x prints among its ``--json`` lines when a signal stops it
#: (``setupSignalHandlers``, ``cli/src/index.ts``: ``printWarning(`${signal} received, shutting
#: down...`)``, yellow by ``style.warning`` whatever stdout is; the same since 2.0.4).
_SIGNAL_LINE = re.compile(
    r"(?:\x1b\[33m)?((?:SIGINT|SIGTERM) received, shutting down\.\.\.)(?:\x1b\[0m)?"
)


def _signal_of(record: Any) -> str | None:
    """The CLI's words when a signal stopped it, if ``record`` is that unreadable line."""
    text = record.text if isinstance(record, MalformedLine) else None
    found = _SIGNAL_LINE.fullmatch(text) if text is not None else None
    return found.group(1) if found is not None else None


def _subagents_call(ran: Mapping[str, Any], ts: Any, stamp: str | None) -> ToolCall:
    """The ``use_subagents`` call the panel's ``subagent`` message alone shows: its prompts."""
    args = {"prompts": _prompts(ran)}
    return ToolCall(
        call_id=f"ui-{ts}", name="use_subagents", args=args,
        description=describe_args("use_subagents", args), timestamp=stamp, started_at=stamp,
    )  # fmt: skip


def _items(ran: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The sub-agents of a ``subagent`` message (``ClineSaySubagentStatus.items``)."""
    items = ran.get("items")
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def _prompts(ran: Mapping[str, Any]) -> list[str]:
    return [i["prompt"] for i in _items(ran) if isinstance(i.get("prompt"), str) and i["prompt"]]


def _subagents_ran(call: ToolCall, ran: Mapping[str, Any]) -> dict[str, Any]:
    """The changes of a ``use_subagents`` call that the sub-agents it ran make, as the panel's
    ``subagent`` message shows them (``SubagentToolHandler``: ``ClineSaySubagentStatus``,
    rewritten in place as they run): the call's :class:`SubAgent` (their prompts and tool
    calls; the panel holds none of their steps) and its result, each one's outcome and answer
    or error as the tool's summary lists them (the request after it sends that summary, whose
    header says the call's outcome)."""
    items = _items(ran)
    outcome = ran.get("status")
    agent = replace(
        call.subagent or SubAgent(steps_missing=True), task="\n\n".join(_prompts(ran)) or None,
        tool_count=as_int(ran.get("toolCalls")), reason="failed" if outcome == "failed" else None,
    )  # fmt: skip
    lines = []
    for item in items:
        head = f"[{item.get('index')}] {str(item.get('status')).upper()} - {item.get('prompt')}"
        detail = item.get("result" if item.get("status") == "completed" else "error")
        lines.append(f"{head}\n{detail}" if isinstance(detail, str) and detail else head)
    changes: dict[str, Any] = {"subagent": agent}
    if lines:
        changes["result"] = text_result("\n\n".join(lines))
    if outcome in ("completed", "failed"):
        changes["status"] = "success" if outcome == "completed" else "error"
    return changes


def _subagents_spent(
    transcript: Transcript, call: ToolCall | None, spent: Mapping[str, Any], provider: str | None
) -> float | None:
    """The sub-agents' own requests, as ``subagent_usage`` adds them up (``SubagentToolHandler``:
    ``ClineSubagentUsageInfo``, their handler's counts as a request's): the tokens of the
    ``use_subagents`` call's sub-agent, counted under it and never among the session's own
    responses; with no call to hold them, the session's sub-agents' all the same
    (``metadata["subagent_usage"]``). Their cost is returned: the session's, as Cline's total
    (``getApiMetrics``) counts it."""
    usage = _request_usage(spent, provider)
    if usage is not None and call is not None:
        agent = call.subagent or SubAgent(steps_missing=True)
        transcript.update(call, subagent=replace(agent, usage=usage))
    elif usage is not None:
        add_into(transcript.metadata.setdefault("subagent_usage", {}), counts_of(usage))
    return _cost(spent.get("cost"))


def _count_deleted(info: Any, provider: str | None, totals: Tokens, costs: list[float]) -> Tokens:
    """The requests a checkpoint restore deleted with the messages after the checkpoint, as it
    adds them up (Cline's ``deleted_api_reqs``, Roo Code's ``api_req_deleted``: ``getApiMetrics``
    of the deleted messages, their sub-agents' included): spent all the same, so their tokens
    go in ``totals`` and their cost in ``costs``, the session's, as the panel's own totals keep
    them. Their counts, returned."""
    info = info if isinstance(info, Mapping) else {}
    counts = counts_of(_request_usage(info, provider))
    add_into(totals, counts)
    cost = _cost(info.get("cost"))
    if cost is not None:
        costs.append(cost)
    return counts


def _deleted_requests(
    info: Any, provider: str | None, totals: Tokens, costs: list[float], stamp: str | None
) -> SystemNotice:
    """The requests a checkpoint restore deleted, counted (:func:`_count_deleted`), and the
    notice that says so (the panel shows nothing of them)."""
    counts = _count_deleted(info, provider, totals, costs)
    # Each count is said with its token kind's word ("reader.spent.input_tokens"): a word of
    # the reader's, so a Chinese view says it too (turnfold.i18n.with_words).
    spent = {f"spent.{name}": f"{n:,}" for name, n in counts.items() if n}
    key = "reader.restore_deleted_requests.spent" if spent else "reader.restore_deleted_requests"
    return worded_notice(key, spent, subtype="deleted_api_reqs", timestamp=stamp)


def _found_text(found: Any) -> str | None:
    """What Roo Code's codebase_search found (``codebase_search_result``: ``{tool, content:
    {query, results}}``), as the tool's result words it for the model (``CodebaseSearchTool``)."""
    content = found.get("content") if isinstance(found, Mapping) else None
    if not isinstance(content, Mapping):
        return None
    results = content.get("results")
    lines = [f"Query: {content.get('query')}", "Results:", ""]
    for hit in results if isinstance(results, list) else []:
        if isinstance(hit, Mapping):
            lines += [f"File path: {hit.get('filePath')}", f"Score: {hit.get('score')}",
                      f"Lines: {hit.get('startLine')}-{hit.get('endLine')}",
                      f"Code Chunk: {hit.get('codeChunk')}", ""]  # fmt: skip
    return "\n".join(lines).rstrip()


def _image_text(saved: Any) -> str | None:
    """Where Roo Code's generate_image saved its image (``image``: ``{imageUri, imagePath}``; the
    URI is the editor's view of the file, no image data)."""
    path = saved.get("imagePath") if isinstance(saved, Mapping) else None
    return path if isinstance(path, str) and path else None


def _todo_lines(todos: list[Any]) -> str:
    """A todo list as Roo Code words it (``todoListToMarkdown``): ``[x]`` done, ``[-]`` begun."""
    boxes = {"completed": "[x]", "in_progress": "[-]"}
    return "\n".join(
        f"{boxes.get(str(t.get('status')), '[ ]')} {t.get('content')}"
        for t in todos if isinstance(t, Mapping)
    )  # fmt: skip


def _error_message(text: str) -> str:
    """What a failed request's JSON (``ask: api_req_failed``, ``error_retry``'s
    ``errorMessage``: ``{message, status, modelId, providerId, details}``) says, or the text."""
    info = _json_of(text)
    said = info.get("message") if isinstance(info, Mapping) else None
    return said if isinstance(said, str) and said else text


def read_panel(
    source: Source,
    messages: Iterable[tuple[int, Any]],
    *,
    printed: bool = False,
    beside_history: bool = False,
) -> Transcript:
    """What Cline's chat panel showed: a lone ``ui_messages.json``, or the CLI 2.x's ``--json``
    output (``printed``) of the same messages (module docstring); or the part of the panel the
    history beside it does not hold (``beside_history``: :func:`_unsaved`)."""
    transcript = Transcript(metadata={"source_format": NAME, "agent": "cline"})
    meta = transcript.metadata
    if printed:
        source.warn(
            "read as what Cline's chat panel showed (the CLI's --json output): the model's own "
            f"messages are in the task's folder ({HISTORY_NAME})"
        )
    elif not beside_history:
        beside = source.path is not None and source.path.with_name(HISTORY_NAME).is_file()
        source.warn(
            f"read as what Cline's chat panel showed: the model's own messages ({HISTORY_NAME}) "
            + ("are beside it; load that file for them" if beside else "were not found beside it")
        )
    response: list[Entry] = []  # the entries since the last request: its response
    waiting: list[ToolCall] = []  # calls whose results the next request sends back
    last_call: ToolCall | None = None
    last_error: str | None = None  # the text of the last error the panel showed
    pending: tuple[Usage | None, float | None] = (None, None)
    costs: list[float] = []
    totals: Tokens = {}  # every request's counts
    placed = True  # whether every response's usage found an entry to carry it
    provider = model = None
    requests = 0
    last: Any = None  # the panel's last message, and the call it shows (None for none)
    last_call_shown: ToolCall | None = None
    stop: Entry | None = None  # how Cline cut the last request's stream short (its cancelReason)
    errors: set[str] = set()  # the errors the panel showed since the last request
    said_any = False  # whether a message of the panel was read: the next is not its first
    deleted = False  # whether a checkpoint restore deleted requests whose tokens still count
    for line, message in messages:
        kind = _panel_kind(message)
        if kind in _RESPONSE_ENDS and stop is not None:
            _stopped(transcript, stop, errors)
            stop = None
        if kind is not None:
            if kind in _RESUMES and last_call_shown is not None and awaits_approval(last):
                # The task stopped while the call waited for approval, and resuming it drops
                # the call (module docstring): it never ran.
                transcript.update(last_call_shown, status="cancelled")
                waiting = [c for c in waiting if c is not last_call_shown]
            last, last_call_shown = message, None
        if kind is None:
            signal = _signal_of(message)
            if signal is not None:
                # Cline aborts the task and flushes what had streamed after this line: the stop
                # goes after that response, unless Cline said it cut that response short.
                if stop is None:
                    stop = AbortMarker(reason=signal)
                source.mapped("(signal line)")
            elif isinstance(message, MalformedLine):
                source.warn(message.reason, line)
            elif (cli := _cli_line(message)) == "task_started":
                meta["session_id"] = message["taskId"]
                source.mapped(cli)
            elif cli == "error":
                said = message["message"]
                meta["outcome"] = "error"
                if said != last_error:  # the CLI's own (its timeout): not shown before
                    transcript.append(SystemNotice(text=said, level="error", subtype="cli_error"))
                source.mapped(cli)
            else:
                source.warn("not a Cline UI message", line)
            continue
        first, said_any = not said_any, True
        what = f"{UI_NAME} message {line}" if beside_history else f"message {line}"
        # A panel read beside its history is another file than the source's: no line of the
        # source is named.
        stamp = warned_timestamp(message.get("ts"), ms_to_iso,
                                 partial(source.warn, line=None if beside_history else line),
                                 what, name="ts", unit="ms since the epoch")  # fmt: skip
        provider = _model_info(message, "providerId") or provider
        own_model = _model_info(message, "modelId")
        model = own_model or model
        text = message.get("text") if isinstance(message.get("text"), str) else ""
        entry: Entry | None = None
        if kind in ("say/task", "say/user_feedback"):
            entry = UserMessage(text=text, timestamp=stamp)
        elif kind == "say/text" and first and not beside_history:
            # Roo Code and Kilo Code say the task as the panel's first text (Task.startTask:
            # ``say("text", task, images)``; the panel shows ``messages[0]`` as the task).
            entry = UserMessage(text=text, timestamp=stamp)
        elif kind in ("say/text", "say/completion_result"):
            entry = AssistantText(text=text, model=own_model, timestamp=stamp) if text else None
        elif kind == "say/reasoning":
            entry = Thinking(text=text, timestamp=stamp)
        elif kind == "say/error":
            entry = SystemNotice(text=text, level="error", subtype="error", timestamp=stamp)
            last_error = text
            errors.add(_error_message(text))
        elif kind == "ask/api_req_failed":
            entry = AssistantError(message=_error_message(text), timestamp=stamp)
            last_error = text
            errors.add(entry.message)
        elif kind == "say/error_retry":
            info = _json_of(text)
            info = info if isinstance(info, Mapping) else {}
            error = _error_message(str(info.get("errorMessage") or text))
            tries = {"attempt": info.get("attempt"), "most": info.get("maxAttempts"), "said": error}
            # The last one (``failed``) says the retries are spent: api_req_failed follows.
            key = "reader.request_failed_attempt" + (".last" if info.get("failed") else "")
            entry = worded_notice(
                key, tries, level="warning", subtype="error_retry", timestamp=stamp
            )
        elif kind == "ask/mistake_limit_reached":
            entry = worded_notice("reader.mistake_limit", {"said": text}, level="warning",
                           subtype="mistake_limit_reached", timestamp=stamp)  # fmt: skip
        elif kind == "say/info":
            entry = SystemNotice(text=text, subtype="info", timestamp=stamp)
        elif kind == "ask/auto_approval_max_req_reached":
            # "Cline has auto-approved 20 API requests. Would you like to reset the count and
            # proceed with the task?": the user's go-ahead is the next request, no words.
            entry = SystemNotice(
                text=text, subtype="auto_approval_max_req_reached", timestamp=stamp
            )
        elif kind in ("say/command", "ask/command"):
            entry = ToolCall(
                call_id=f"ui-{message.get('ts')}", name="execute_command",
                args={"command": text}, description=describe_args("", {"description": text}),
                timestamp=stamp, started_at=stamp,
            )  # fmt: skip
        elif kind in ("say/command_output", "ask/command_output"):
            if last_call is not None and last_call.name == "execute_command":
                before = last_call.result.text if last_call.result is not None else ""
                transcript.update(last_call, result=text_result((before or "") + text))
            elif text:
                entry = SystemNotice(text=text, subtype="command_output", timestamp=stamp)
        elif kind in ("say/tool", "ask/tool", "say/diff_error", *_MCP_KINDS):
            if kind == "say/diff_error":  # WriteToFileToolHandler: the file's path, no JSON
                payload: Any = {"tool": "replace_in_file", "path": text}
            else:
                payload = _json_of(text)
                payload = payload if isinstance(payload, Mapping) else {"text": text}
            # An MCP request names its kind in ``type`` (ClineAskUseMcpServer), a tool in ``tool``.
            key = "type" if kind in _MCP_KINDS else "tool"
            named = payload.get(key)
            args = {k: v for k, v in payload.items() if k != key}
            if kind in _MCP_KINDS:
                name = named if named in _MCP_REQUESTS else "use_mcp_tool"
            else:
                name = _panel_tool(named, args) if isinstance(named, str) and named else "tool"
            entry = ToolCall(
                call_id=f"ui-{message.get('ts')}", name=name, args=args,
                description=describe_args(name, args), timestamp=stamp, started_at=stamp,
            )  # fmt: skip
        elif kind in ("ask/followup", *_RESPONDS):
            # A question ({question, options, selected}), or plan mode's answer ({response,
            # options, selected}: PlanModeRespondHandler), which the user answers in turn.
            question = _json_of(text)
            question = question if isinstance(question, Mapping) else {}
            said = question.get("question" if kind == "ask/followup" else "response")
            chosen = question.get("selected")
            entry = AssistantText(text=said if isinstance(said, str) else text, timestamp=stamp)
            if isinstance(chosen, str) and chosen:
                # An option the user picked is written into the question (AskFollowupQuestion
                # handler), no user_feedback: the pick is the user's answer.
                response.append(transcript.append(entry))
                entry = UserMessage(text=chosen, timestamp=stamp)
        elif kind == "say/mcp_server_response":
            # What the MCP tool or resource returned (UseMcpToolHandler, AccessMcpResource-
            # Handler; ``Error:`` first when the tool said it failed): the request after it
            # sends it back, which settles the call.
            if last_call is not None and last_call.name in _MCP_REQUESTS:
                images = [i for i in map(data_url_image, _MCP_IMAGE.findall(text)) if i]
                shown = _MCP_IMAGE.sub("", text).rstrip()
                transcript.update(last_call, result=text_result(shown, images=images))
            elif text:
                entry = SystemNotice(text=text, subtype="mcp_server_response", timestamp=stamp)
        elif kind == "say/mcp_notification":
            entry = SystemNotice(text=text, subtype="mcp_notification", timestamp=stamp)
        elif kind in ("say/browser_action_launch", "ask/browser_action_launch",
                      "say/browser_action"):  # fmt: skip
            # BrowserToolHandler: the launch's URL, or the action's JSON ({action, coordinate,
            # text}); what it saw is the browser_action_result after it.
            if kind == "say/browser_action":
                action = _json_of(text)
                args = dict(action) if isinstance(action, Mapping) else {"action": text}
            else:
                args = {"action": "launch", "url": text}
            entry = ToolCall(
                call_id=f"ui-{message.get('ts')}", name="browser_action", args=args,
                description=describe_args("browser_action", args), timestamp=stamp,
                started_at=stamp,
            )  # fmt: skip
        elif kind == "say/browser_action_result":
            seen = _json_of(text)  # {screenshot, logs, currentUrl, currentMousePosition}
            if last_call is not None and last_call.name == "browser_action" and seen:
                seen = seen if isinstance(seen, Mapping) else {"logs": text}
                shot = data_url_image(seen.get("screenshot"))
                lines = [f"{label}: {seen[key]}" for key, label in _BROWSER_SEEN if seen.get(key)]
                transcript.update(
                    last_call, result=text_result("\n".join(lines), images=[shot] if shot else None)
                )
            elif text and not seen:  # "" is the panel's spinner while the browser starts
                entry = SystemNotice(text=text, subtype="browser_action_result", timestamp=stamp)
        elif kind == "say/subtask_result":
            # Roo Code: the sub-task's answer, which is the new_task call's result
            # (ClineProvider's reopenParentFromDelegation writes both).
            if last_call is not None and last_call.name == "new_task":
                transcript.update(last_call, status="success", result=text_result(text))
            else:
                entry = AssistantText(text=text, timestamp=stamp) if text else None
        elif kind in ("say/condense_context", "say/sliding_window_truncation"):
            # Roo Code: the context condensed ({summary, prevContextTokens, …}), or its oldest
            # messages dropped ({messagesRemoved, prevContextTokens, …}).
            condensed = message.get(
                "contextCondense" if kind == "say/condense_context" else "contextTruncation"
            )
            condensed = condensed if isinstance(condensed, Mapping) else {}
            summary = condensed.get("summary")
            entry = CompactionBoundary(
                summary=summary if isinstance(summary, str) else None,
                trigger="condense" if kind == "say/condense_context" else "truncation",
                pre_tokens=as_int(condensed.get("prevContextTokens")), timestamp=stamp,
            )  # fmt: skip
        elif kind in _PANEL_CALLS:
            # A tool the panel shows by its own kind, its JSON (use_subagents' {prompts}) or
            # its text (new_task's and condense's context) the arguments.
            named = _PANEL_CALLS[kind]
            given = _json_of(text)
            args = dict(given) if isinstance(given, Mapping) else {"context": text} if text else {}
            entry = ToolCall(
                call_id=f"ui-{message.get('ts')}", name=named, args=args,
                description=describe_args(named, args), timestamp=stamp, started_at=stamp,
            )  # fmt: skip
        elif kind == "say/hook_status":
            # A hook runs (hook-executor.ts: {hookName, toolName, status, …}).
            hook = _json_of(text)
            hook = hook if isinstance(hook, Mapping) else {}
            said = " ".join(
                str(hook[k]) for k in ("hookName", "toolName", "status") if hook.get(k)
            )  # fmt: skip
            entry = worded_notice(
                "reader.hook", {"said": said or text}, subtype="hook", timestamp=stamp
            )
        elif kind in ("say/hook_output_stream", "say/conditional_rules_applied"):
            entry = SystemNotice(text=text, subtype=kind.partition("/")[2], timestamp=stamp)
        elif kind in _PANEL_WARNINGS:
            alone, before = _PANEL_WARNINGS[kind]
            entry = worded_notice(before if text else alone, {"said": text}, level="warning",
                           subtype=kind.partition("/")[2], timestamp=stamp)  # fmt: skip
        elif kind == "say/user_feedback_diff":
            # The user changed the edit Cline proposed before approving it ({tool, path, diff}).
            changed = _json_of(text)
            changed = changed if isinstance(changed, Mapping) else {}
            path, diff = changed.get("path"), changed.get("diff") or text
            key = "reader.user_edited.path" if path else "reader.user_edited"
            said = {"path": path, "diff": diff}
            entry = worded_notice(key, said, subtype="user_feedback_diff", timestamp=stamp)
        elif kind in ("say/subagent", "say/subagent_usage"):
            delegating = last_call if last_call and last_call.name == "use_subagents" else None
            reported = _json_of(text)
            reported = reported if isinstance(reported, Mapping) else {}
            if kind == "say/subagent_usage":
                cost = _subagents_spent(transcript, delegating, reported, provider)
                if cost is not None:
                    costs.append(cost)
            elif reported and (delegating is None or delegating.subagent is not None):
                # The call's only row: Cline asks for approval (use_subagents) but says
                # nothing of a call it may run on its own (SubagentToolHandler).
                call = _subagents_call(reported, message.get("ts"), stamp)
                entry = replace(call, **_subagents_ran(call, reported))
            elif reported and delegating is not None:
                transcript.update(delegating, **_subagents_ran(delegating, reported))
            elif text:
                entry = SystemNotice(text=text, subtype="subagent", timestamp=stamp)
        elif kind in _DELETED_REQUESTS:
            entry = _deleted_requests(_json_of(text), provider, totals, costs, stamp)
            deleted = True
        elif kind == "say/too_many_tools_warning":
            # Roo Code's Task.startTask: {toolCount, serverCount, threshold}.
            many = _json_of(text)
            many = many if isinstance(many, Mapping) else {}
            counts = {"tools": many.get("toolCount"), "servers": many.get("serverCount"),
                      "threshold": many.get("threshold"), "said": text}  # fmt: skip
            key = "reader.too_many_tools.counts" if many else "reader.too_many_tools"
            entry = worded_notice(key, counts, level="warning", subtype="too_many_tools_warning",
                           timestamp=stamp)  # fmt: skip
        elif kind in ("say/codebase_search_result", "say/image"):
            # Roo Code: what codebase_search found ({tool, content: {query, results}}), the
            # image generate_image saved ({imageUri, imagePath}): the call's result.
            named = "codebase_search" if kind == "say/codebase_search_result" else "generate_image"
            found = _json_of(text)
            got = (_found_text(found) if named == "codebase_search" else _image_text(found)) or text
            if last_call is not None and last_call.name == named:
                transcript.update(last_call, result=text_result(got))
            elif got:
                entry = SystemNotice(text=got, subtype=kind.partition("/")[2], timestamp=stamp)
        elif kind == "say/user_edit_todos":
            # Roo Code: the user changed the todo list update_todo_list proposed before approving
            # it ({tool, todos}); the call's result says "User edits todo" with the same list.
            edited = _json_of(text)
            todos = edited.get("todos") if isinstance(edited, Mapping) else None
            listed = _todo_lines(todos) if isinstance(todos, list) else text
            entry = worded_notice("reader.user_edited_todos", {"todos": listed},
                           subtype="user_edit_todos", timestamp=stamp)  # fmt: skip
        elif kind == "say/api_req_started":
            requests += 1
            info = _json_of(text)
            info = info if isinstance(info, Mapping) else {}
            request = info.get("request")
            request = request if isinstance(request, str) else ""
            unshown = _settle(transcript, waiting, request, message.get("ts"))
            response += unshown
            placed = _respond(transcript, response, pending) and placed
            waiting, response = [], []
            if stop is not None:
                _stopped(transcript, stop, errors)
            stop, errors = _cancelled(info), set()
            notice = cline_notice(request)
            if notice is not None:  # the nudge, a resumed task: what the request says first
                transcript.append(replace(notice, timestamp=stamp))
            # Its counts are the response's that follows: kept until that is read.
            pending = (_request_usage(info, provider), _cost(info.get("cost")))
            add_into(totals, counts_of(pending[0]))
            if pending[1] is not None:
                costs.append(pending[1])
            source.mapped(kind)
            continue
        elif kind in _PANEL_IGNORED:
            source.ignored(kind)
            continue
        else:  # a kind of the panel not read here: its text is still shown
            source.warn(f"Cline UI message {kind} shown as a notice", line, record_type=kind)
            if text:
                transcript.append(SystemNotice(text=text, subtype=kind, timestamp=stamp))
            continue
        source.mapped(kind)
        if entry is None:
            continue
        transcript.append(entry)
        response.append(entry)
        if isinstance(entry, ToolCall):
            waiting.append(entry)
            last_call = last_call_shown = entry
    placed = _respond(transcript, response, pending) and placed
    if stop is not None:
        _stopped(transcript, stop, errors)
    for call in waiting:  # no request sent their results back: the task stopped here
        transcript.update(call, status="unknown")
    if last_call_shown is not None and awaits_approval(last):
        wait_for_approval(TranscriptBuilder(transcript, source.name), last_call_shown)
    if (deleted or not placed) and totals:
        # Some response had no entry to carry its usage, or a restore deleted it: every
        # request's is the total, so that the session's tokens are all counted.
        meta["usage"] = totals
    if requests:
        meta["api_requests"] = requests
    if costs:
        meta["cost_usd"] = round(sum(costs), 6)
    if model is not None:
        meta["model"] = model
    if provider is not None:
        meta["model_provider"] = provider
    return transcript


#: What ends a request's response in the panel: the next request, the user's words, a resume.
_RESPONSE_ENDS = frozenset({"say/api_req_started", "say/user_feedback", "say/task", *_RESUMES})


def _cancelled(info: Mapping[str, Any]) -> Entry | None:
    """How Cline cut a request's stream short, as its ``api_req_started`` records it
    (``cancelReason``, ``streamingFailedMessage``: ``abortStream``), in the words it adds to the
    history (:func:`interruption`), here the reader's own; None for a request it did not stop."""
    reason = info.get("cancelReason")
    if reason == "user_cancelled":
        return stop("reader.response_interrupted_by_user")
    if reason != "streaming_failed":
        return None
    said = info.get("streamingFailedMessage")
    if isinstance(said, str) and said:
        return AssistantError(message=_error_message(said))
    return failure("reader.response_interrupted_by_api_error")


def _stopped(transcript: Transcript, stop: Entry, errors: set[str]) -> None:
    """``stop`` after the response it ended, unless it is a failure the panel showed as an error
    already (the failed request's ``api_req_failed``): a retry's warning only says a retry
    followed it."""
    if not (isinstance(stop, AssistantError) and stop.message in errors):
        transcript.append(stop)


def _respond(
    transcript: Transcript, entries: list[Entry], pending: tuple[Usage | None, float | None]
) -> bool:
    """A request's usage and cost on the response it got (the entries after it); False when
    the response has no entry to carry its usage (a question yolo mode answered, shown as a
    notice; a request that failed)."""
    usage, cost = pending
    carrier = usage_carrier(entries)
    if carrier is None:
        return usage is None
    if usage is not None:
        transcript.update(carrier, usage=usage)
    if cost is not None:
        carrier.meta["cost_usd"] = cost
    return True


def _results(request: str) -> list[tuple[str, str, str]]:
    """The results a request's text opens with: ``(tool, header, body)`` per ``[tool] Result:``
    header, the blocks Cline adds after them cut off; a question's answer, a reply's and the
    empty second result of a failed call left out (module docstring)."""
    headers = list(_BLOCK_HEADER.finditer(request))
    found = []
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(request)
        body = request[header.end() : end]
        after = _AFTER_RESULTS.search(body)
        body = (body[: after.start()] if after else body).strip()
        name = _HEADER_TOOLS.get(header.group(1), header.group(1))
        if name not in _NO_CALL_HEADERS and body != NO_RESULT:
            found.append((name, header.group(0), body))
    return found


def _settle(transcript: Transcript, calls: list[ToolCall], request: str, ts: Any) -> list[ToolCall]:
    """The calls a request sends the results of: its text opens with a ``[tool] Result:``
    header per call, in order; each says the call's outcome (:func:`status_of`), and is its
    result where the panel showed none. Calls and headers that do not pair are left
    ``unknown``; results when the panel showed no call are calls of their own, appended and
    returned."""
    results = _results(request)
    if not calls:
        made: list[ToolCall] = []
        for index, (name, header, body) in enumerate(results):
            # "[read_file for 'a.txt'] Result:": what the header says of the call describes it.
            described = header[1 : -len("] Result:")].partition(" for ")[2].strip("'") or None
            call = ToolCall(
                call_id=f"ui-{ts}-{index}", name=name, args={},
                description=describe_args("", {"description": described}) if described else None,
                status=status_of(body, name), result=text_result(body) if body else None,
            )  # fmt: skip
            transcript.append(call)
            made.append(call)
        return made
    paired = len(results) == len(calls)
    for index, call in enumerate(calls):
        if not paired:
            if call.status in UNSETTLED:  # not a call the panel settled (a sub-task's answer)
                transcript.update(call, status="unknown")
            continue
        name, _, body = results[index]
        changes: dict[str, Any] = {"status": status_of(body, name)}
        if name != call.name:  # the tool the model called (_PANEL_TOOLS)
            changes["name"] = name
            changes["description"] = describe_args(name, call.args) or call.description
        if call.result is None and body:
            changes["result"] = text_result(body)
        transcript.update(call, **changes)
    return []
