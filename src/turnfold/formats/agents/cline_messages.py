"""Cline 4.x sessions (``<sessionId>.messages.json``), as the Cline SDK (``@cline/core``) writes
them for the VS Code extension, the CLI and the desktop app.

Cline 4 moved its tasks off ``api_conversation_history.json`` (read by
:mod:`~turnfold.formats.agents.cline`, which the extension now only reads, as legacy data:
``apps/vscode/src/sdk/legacy-state-reader.ts``). A session is a folder
``~/.cline/data/sessions/<sessionId>/`` (``resolveSessionDataDir``,
``sdk/packages/shared/src/storage/paths.ts``; ``CLINE_DATA_DIR`` / ``CLINE_SESSION_DATA_DIR``
move it) holding (``SessionArtifacts``, ``sdk/packages/core/src/services/session-artifacts.ts``):

- ``<sessionId>.messages.json``: ``{version: 1, updated_at, agent: "lead" | "subagent" |
  "teammate", sessionId, taskType?, origin, messages, system_prompt?}``
  (``buildMessagesFilePayload``, ``sdk/packages/core/src/services/session-data.ts``; the
  contract is ``sdk/packages/core/docs/messages-contract-v1.md``). Read here;
- ``<sessionId>.json``, the manifest (``SessionManifestSchema``,
  ``session/models/session-manifest.ts``): ``cwd``, ``status``, ``started_at``, ``ended_at``,
  ``provider``, ``model``, ``metadata.title``. Read beside the messages for the session's
  facts (a ``status`` of ``failed`` is the outcome ``error``, ``cancelled`` ``cancelled``);
- ``<sessionId>.compaction.json``: the compacted history the model was last sent, a sidecar
  that is "safe to delete" (``session-manifest-store.ts``): the messages file holds every
  message, so it is not read;
- a sub-agent's messages, ``<agentId>.messages.json`` (``agent: "subagent"``, ``sessionId``
  ``<root>__<agentId>``), and each run of a teammate's (agent teams: the CLI and the SDK),
  ``<agentId>__<teamTaskId>.messages.json`` (``agent: "teammate"``, ``sessionId``
  ``<root>__teamtask__<agentId>__<teamTaskId>``: ``childArtifactFileStem``,
  ``session/models/session-graph.ts``), written empty when the run starts and whole when it
  ends (``team/team-child-session-manager.ts``).

Messages (``MessageWithMetadata``, ``sdk/packages/shared/src/llms/messages.ts``) are
Anthropic-shaped, ``role`` ``user`` or ``assistant``, with Cline's own fields and blocks on top.
They are read with :class:`~turnfold.formats.anthropic.AnthropicBuilder`'s block mapping
(text, ``thinking``, ``redacted_thinking``, ``tool_use``, ``tool_result``), and:

- ``modelInfo {id, provider, family}`` names the message's model, and ``metrics
  {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost}`` is the usage of the
  model call that wrote it (``usageDelta``, ``sdk/packages/agents/src/agent-runtime.ts``;
  Cline 3's were ``modelInfo {modelId, providerId}`` and ``metrics {tokens {prompt,
  completion, cached}, cost}``). ``inputTokens`` is the AI SDK's ``inputTokens.total``, the
  cached tokens included (``normalizeUsage``, ``sdk/packages/llms/src/providers/ai-sdk.ts``,
  whose pricing takes the cache reads and writes back out of it), which is turnfold's
  convention as it is. ``cost`` is the entry's ``meta["cost_usd"]``; the costs add up to
  ``metadata["cost_usd"]``. ``ts`` (ms since the epoch) is each entry's time (one that is no
  time, as the manifest's ``started_at`` or ``ended_at`` that is none, is left out and said);
- an ``image`` block is ``{data, mediaType}`` (not Anthropic's ``source``); a ``file`` block
  ``{path, content}`` is a file the user attached (an attachment line); a ``media`` block is
  what the model generated (an image on its text, or a line naming it);
- a ``tool_result``'s ``content`` is what the tool returned (``toPersistedToolResultContent``,
  ``sdk/packages/core/src/session/persisted-tool-result-content.ts``): a string, a list of
  blocks, a list of ``ToolOperationResult`` ``{query, result, error?, success}`` (one per file
  read or command run: ``extensions/tools/types.ts``), or the JSON of an object (one
  ``ToolOperationResult``; ``{"error": …}`` when the tool failed, was skipped or denied:
  ``executePreparedTool``). ``is_error`` is the error flag; an operation with ``success:
  false`` fails the call too, unless the run's abort stopped it (``Command was aborted``: the
  user's interrupt), which cancels it; a denial (``tool-approval-denial.ts``, ``agent-runtime.ts``'s
  ``was not approved``, the CLI's ``acp/permissions.ts``) is ``cancelled``, and the feedback
  the user gave with it their :class:`UserMessage`;
- the user's words are wrapped ``<user_input mode="act">…</user_input>`` (or ``<user_command
  slash="…">``), after a ``<mode_notice>`` when they switched modes
  (``sdk/packages/shared/src/prompt/format.ts``): the words are the :class:`UserMessage`
  (``meta["mode"]``, ``command``), a notice an info :class:`SystemNotice`. Messages the
  runtime wrote in the user's role (``metadata.displayRole`` ``system``: hook context; a
  task resumption; the plan-to-act continuation: ``isSyntheticSdkUserMessage``,
  ``apps/vscode/src/sdk/sdk-user-message-mapping.ts``) are notices too, and a compaction
  summary (``metadata.kind: "compaction_summary"``) a :class:`CompactionBoundary`; so is the
  runtime's report of teammate runs that ended (``System-delivered teammate async run
  updates``: ``buildTeamRunContinuationPrompt``);
- a ``spawn_agent`` call's sub-agent is the sub-agent file in the session's folder whose first
  prompt is the call's ``task`` (the file records no other link: ``spawn-agent-tool.ts`` runs
  the sub-agent on ``input.task``), its result the sub-agent's answer;
- a ``team_run_task`` call (``team-tools.ts``; the lead's or a teammate's) gives a teammate,
  its ``agentId``, a task: its sub-agent is that teammate's file whose run was given the task,
  which may follow the teammate's unread mail in its prompt (``routeToTeammate``,
  ``multi-agent.ts``), and its result the teammate's answer (``runMode: "sync"``) or the run it
  queued (``async``). A run that continues the teammate's conversation
  (``continueConversation``) writes the earlier runs' messages again: shown with their own runs,
  not twice; with the continued run when an earlier run's own file matches no call.

Detection: a JSON object with Cline's envelope (``version``, ``sessionId``, ``agent``,
``messages``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeGuard

from turnfold import codec
from turnfold.formats import anthropic_blocks
from turnfold.formats.agents.cline import ms_to_iso
from turnfold.formats.anthropic import AnthropicBuilder, role_of
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    as_int,
    as_text,
    checked_timestamp,
    counted_usage,
    describe_args,
    relative,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.protocol import not_read
from turnfold.formats.source import (
    Source,
    join_warnings,
    json_object_file,
    open_source,
    sibling_files,
)
from turnfold.formats.wording import failure
from turnfold.formats.wrappers import keep_wrapper_keys, sample
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    UserMessage,
)
from turnfold.usage import attach_usage, usage_carrier

NAME = "cline-messages"

RECORDS = Records(
    mapped={
        "user": "the user's words (UserMessage, <user_input> unwrapped; images, attached "
        "files), tool results, or a message of the runtime's (SystemNotice, "
        "CompactionBoundary)",
        "assistant": "text, thinking and tool calls in order; modelInfo, metrics (usage, "
        "cost) and ts; a display-only error (displayRole error) an assistant error",
    },
)

#: The messages file's suffix (``SessionArtifacts.sessionMessagesPath``).
MESSAGES_SUFFIX = ".messages.json"
#: ``agent`` of a sub-agent's file and of a teammate's (``resolveMessagesFileContext``).
SUBAGENT = "subagent"
TEAMMATE = "teammate"

_ROLES = ("user", "assistant")
_USER_INPUT = re.compile(r"<user_input\b([^>]*)>(.*?)</user_input>", re.S)
_MODE = re.compile(r'\bmode="([a-z]+)"')
_USER_COMMAND = re.compile(
    r'<user_command\b[^>]*?\bslash="([^"]+)"[^>]*>(.*?)</user_command>', re.S
)
_MODE_NOTICE = re.compile(r"<mode_notice>(.*?)</mode_notice>", re.S)
#: Prompts the extension sends that the user did not write (``isSyntheticUserPrompt``).
_TASK_RESUMPTION = "[TASK RESUMPTION]"
_ACT_CONTINUATION = "The user approved switching to act mode. Continue with the approved plan now."
_HOOK_CONTEXT = "<hook_context"
#: What the runtime tells the lead when the teammate runs it queued end
#: (``buildTeamRunContinuationPrompt``, ``session/team/team-session-coordinator.ts``).
_TEAM_RUN_UPDATES = "System-delivered teammate async run updates:"
#: Reasons a call was denied, not failed: the extension's (``tool-approval-denial.ts``), the
#: runtime's default (``agent-runtime.ts``) and the CLI's (``acp/permissions.ts``).
_DENIED = (
    "User denied the tool execution",
    "The user denied this edit.",
    "Tool execution was cancelled because the user sent a follow-up message.",
    "User rejected the tool call",
    "Permission request was cancelled",
)
_NOT_APPROVED = re.compile(r'Tool "[^"]*" was not approved')
#: How an operation the run's abort signal stopped (the user's interrupt) ends its error: the
#: executors' own (``extensions/tools/executors/bash.ts``, ``file-read.ts``, ``search.ts``),
#: as ``definitions.ts`` wraps them (``Command failed: …``).
_ABORTED = ("Command was aborted", "File read was aborted", "Search operation aborted")
#: What follows a denial when the user typed something (``buildToolApprovalDenialReason``).
_FEEDBACK = re.compile(r"\s*The user provided the following feedback:\s*<feedback>\s*(.*?)\s*"
                       r"</feedback>\s*$", re.S)  # fmt: skip


# --- the user's words -----------------------------------------------------------------------------


def unwrap_prompt(text: str) -> tuple[str, dict[str, Any], list[str]]:
    """The user's words in a prompt as the runtime persisted it, what the wrappers said (``mode``,
    ``command``) and the mode notices before them (``formatUserInputBlock``,
    ``formatUserCommandBlock``, ``formatModeSwitchNotice``).

    >>> unwrap_prompt('<mode_notice>The user switched.</mode_notice>\\n'
    ...               '<user_input mode="plan">fix it</user_input>')
    ('fix it', {'mode': 'plan'}, ['The user switched.'])
    """
    notices = [n.strip() for n in _MODE_NOTICE.findall(text) if n.strip()]
    text = _MODE_NOTICE.sub("", text)
    said: dict[str, Any] = {}
    found = _USER_INPUT.search(text)
    if found is not None:
        mode = _MODE.search(found.group(1))
        if mode is not None:
            said["mode"] = mode.group(1)
        text = text[: found.start()] + found.group(2) + text[found.end() :]
    command = _USER_COMMAND.search(text)
    if command is not None:
        said["command"] = "/" + command.group(1)  # as Claude Code's are named: "/review"
        text = text[: command.start()] + command.group(2) + text[command.end() :]
    return text.strip(), said, notices


def _synthetic(message: Mapping[str, Any], text: str) -> Entry | None:
    """The entry a message the runtime wrote in the user's role stands for; None for the
    user's own (``isSyntheticSdkUserMessage``)."""
    metadata = message.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    if metadata.get("kind") == "compaction_summary":  # CompactionSummaryMetadata
        summary = as_text(metadata.get("summary")) or text or None
        return CompactionBoundary(summary=summary, pre_tokens=as_int(metadata.get("tokensBefore")))
    role = metadata.get("displayRole")
    if isinstance(role, str) and role.strip().lower() in ("system", "status"):
        subtype = "hook_context" if text.startswith(_HOOK_CONTEXT) else "runtime"
        return SystemNotice(text=text, level="info", subtype=subtype)
    if text.startswith(_HOOK_CONTEXT):
        return SystemNotice(text=text, level="info", subtype="hook_context")
    if text.startswith(_TASK_RESUMPTION):
        return SystemNotice(text=text.splitlines()[0], level="info", subtype="task_resumption")
    if text == _ACT_CONTINUATION:
        return SystemNotice(text=text, level="info", subtype="mode_switch")
    if text.startswith(_TEAM_RUN_UPDATES):
        return SystemNotice(text=text, level="info", subtype="team_run_updates")
    return None


def _display_error(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is the runtime's record of an error that ended a run: an assistant
    message marked ``metadata: {displayOnly: true, displayRole: "error"}`` (``core``'s
    ``recordTerminalError``: the provider's error text, kept for display, left out of the
    model's context)."""
    metadata = message.get("metadata")
    return (
        message.get("role") == "assistant"
        and isinstance(metadata, Mapping)
        and metadata.get("displayRole") == "error"
    )


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


# --- tool results ---------------------------------------------------------------------------------


def _image(block: Mapping[str, Any]) -> ImageData | None:
    """Cline's ``image`` block, ``{data, mediaType}`` (base64), or an Anthropic one."""
    data = block.get("data")
    if isinstance(data, str) and data:
        media_type = block.get("mediaType")
        return ImageData(
            media_type=media_type if isinstance(media_type, str) else "image", data=data
        )
    return anthropic_blocks.image_of(block)


def _file_line(block: Mapping[str, Any], cwd: str | None = None) -> str:
    """A ``file`` block, ``{path, content}``: the file the user attached, as one line."""
    content = block.get("content")
    size = len(content.encode("utf-8", "replace")) if isinstance(content, str) else None
    path = as_text(block.get("path"))
    return anthropic_blocks.attachment_line(
        {"type": "file", "name": relative(path, cwd) if path else None, "size": size}
    )


def media_of(block: Mapping[str, Any]) -> ImageData | str:
    """A ``media`` block (``GeneratedMedia``, ``sdk/packages/shared/src/llms/media.ts``): a
    base64 image, else a line naming what was generated."""
    media = block.get("media")
    media = media if isinstance(media, Mapping) else {}
    source = media.get("source")
    source = source if isinstance(source, Mapping) else {}
    media_type = as_text(media.get("mediaType")) or "media"
    if media.get("modality") == "image" and source.get("type") == "base64":
        data = as_text(source.get("data"))
        if data is not None:
            return ImageData(media_type=media_type, data=data)
    name = as_text(media.get("name")) or as_text(source.get("url")) or as_text(media.get("id"))
    return f"[{media.get('modality') or 'media'}: {' · '.join(p for p in (name, media_type) if p)}]"


def _is_operation(value: Any) -> bool:
    """A ``ToolOperationResult``: ``{query, result, error?, success}``."""
    return (
        isinstance(value, MAPPINGS) and "query" in value and isinstance(value.get("success"), bool)
    )


def _parts(value: Any, texts: list[str], images: list[ImageData]) -> None:
    """The text and images of an operation's ``result`` or a result's blocks."""
    if value is None or value == "":
        return
    if isinstance(value, str):
        texts.append(value)
        return
    if not isinstance(value, list):
        texts.append(stringify(value))
        return
    for item in value:
        if isinstance(item, str):
            texts.append(item)
        elif not isinstance(item, MAPPINGS):
            texts.append(stringify(item))
        elif item.get("type") == "image" and (image := _image(item)) is not None:
            images.append(image)
        elif item.get("type") == "file":
            texts.append(_file_line(item))
        else:  # Anthropic's blocks (a web_search_result's title and URL); else its JSON
            text, found = anthropic_blocks.content_of([item])
            images += found
            if text is not None or not found:
                texts.append(text if text is not None else stringify(item))


def _operations(operations: list[Any], images: list[ImageData]) -> tuple[str, ToolStatus | None]:
    """``ToolOperationResult``s as one text (each headed by its ``query`` when there are several),
    and ``error`` when one failed, ``cancelled`` when every one that failed was stopped by the
    run's abort (the user's interrupt), None when none failed."""
    shown: list[str] = []
    failed: ToolStatus | None = None
    for operation in operations:
        texts: list[str] = []
        _parts(operation.get("result"), texts, images)
        error = as_text(operation.get("error"))
        if operation.get("success") is False:
            aborted = error is not None and error.endswith(_ABORTED)
            failed = "cancelled" if aborted and failed in (None, "cancelled") else "error"
        if error is not None and any(error in t for t in texts):
            error = None  # a command's output opens with it: [Command exited with code 1]
        body = "\n".join(t for t in (error, *texts) if t)
        query = as_text(operation.get("query"))
        shown.append(f"{query}\n{body}" if len(operations) > 1 and query else body)
    return "\n\n".join(s for s in shown if s), failed


def tool_outcome(block: Mapping[str, Any]) -> tuple[ToolStatus, ToolResult, str | None, Any]:
    """A ``tool_result``'s status, result, the feedback the user gave with a denial, and the
    object the tool returned when it returned one (a ``spawn_agent``'s output)."""
    return outcome_of(block.get("content"), flagged=block.get("is_error") is True)


def outcome_of(content: Any, *, flagged: bool) -> tuple[ToolStatus, ToolResult, str | None, Any]:
    """:func:`tool_outcome` of what a tool returned: the persisted ``content`` (a string, the
    JSON of an object, blocks, ``ToolOperationResult``s) or the object itself, as the CLI's
    ``--json`` events carry it (:mod:`~turnfold.formats.agents.cline_json`); ``flagged`` is
    the error flag."""
    images: list[ImageData] = []
    returned: Any = content if isinstance(content, MAPPINGS) else None
    if isinstance(content, str) and content.lstrip().startswith(("{", "[")):
        try:
            returned = codec.loads(content)
        except ValueError:
            returned = None
    failed: ToolStatus | None = None
    if isinstance(returned, Mapping) and _is_operation(returned):
        text, failed = _operations([returned], images)
    elif isinstance(returned, Mapping) and set(returned) == {"error"}:
        text = returned["error"] if isinstance(returned["error"], str) else stringify(returned)
    elif isinstance(content, list) and content and all(_is_operation(c) for c in content):
        text, failed = _operations(content, images)
    elif isinstance(content, str):
        text = content
    else:
        texts: list[str] = []
        _parts(content, texts, images)
        text = "\n".join(texts)
    feedback = None
    if flagged and (found := _FEEDBACK.search(text)) is not None:
        feedback = found.group(1) or None
        text = text[: found.start()]
    status: ToolStatus = failed or ("error" if flagged else "success")
    if flagged and (text.startswith(_DENIED) or _NOT_APPROVED.match(text)):
        status = "cancelled"
    structured = returned if isinstance(returned, Mapping) else None
    return (
        status,
        text_result(text or None, images=images, structured=structured),
        feedback,
        returned,
    )


# --- descriptions ---------------------------------------------------------------------------------


#: The argument that lists what each of Cline 4's batch tools acts on (``ReadFilesInputSchema``,
#: ``RunCommandsInputSchema``, ``SearchCodebaseInputSchema``, ``FetchWebContentInputSchema``).
_LISTED = {"read_files": "files", "run_commands": "commands", "search_codebase": "queries",
           "fetch_web_content": "requests"}  # fmt: skip


def describe(name: str, args: Any, cwd: str | None) -> str | None:
    """What a call of one of Cline 4's tools acted on (``sdk/packages/core/src/extensions/tools/
    schemas.ts``): the files of ``read_files``, the commands of ``run_commands``, the queries of
    ``search_codebase``, the URLs of ``fetch_web_content``; else :func:`describe_args`."""
    if isinstance(args, Mapping):
        items = args.get(_LISTED.get(name, ""))
        if isinstance(items, (str, Mapping)):
            items = [items]
        if isinstance(items, list) and items:
            named = []
            for item in items:
                if isinstance(item, Mapping):  # {path, start_line}, {command, args}, {url}
                    item = item.get("path") or item.get("url") or item.get("command")
                if isinstance(item, str) and item.strip():
                    named.append(relative(item.strip(), cwd))
            if named:  # made one line and cut to length as every description is
                return describe_args("", {"description": ", ".join(named)})
    return describe_args(name, args, cwd)


# --- the builder ----------------------------------------------------------------------------------


class ClineMessagesBuilder(AnthropicBuilder):
    """An :class:`AnthropicBuilder` that reads Cline 4's blocks, wrappers and tool outputs."""

    def __init__(self, transcript: Transcript, source_name: str, *, cwd: str | None) -> None:
        super().__init__(transcript, source_name, cwd=cwd)
        #: The time of the message being fed: when its results came back.
        self.stamp: str | None = None

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        if isinstance(message, Mapping) and _display_error(message):
            # The error that ended a run (``recordTerminalError``): shown, never sent to the
            # model, no answer of its.
            text = "\n\n".join(_texts(message.get("content"))).strip()
            self._append(AssistantError(message=text) if text else failure("reader.run_failed"))
            return
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            results = isinstance(content, list) and any(
                isinstance(b, Mapping) and anthropic_blocks.is_result_block(b) for b in content
            )
            text, _, _ = unwrap_prompt("\n\n".join(_texts(content)))
            synthetic = None if results else _synthetic(message, text)
            if synthetic is not None:
                self._append(synthetic)
                return
        super().feed(message, line)

    def _model_of(self, message: Mapping[str, Any]) -> str | None:
        # The model is modelInfo.id (MessageWithMetadata), not Anthropic's ``model``.
        info = message.get("modelInfo")
        model = as_text(info.get("id")) if isinstance(info, Mapping) else None
        return model if model is not None else super()._model_of(message)

    def _assistant_entry(
        self, block: Any, batch_id: str, model: str | None, line: int
    ) -> Entry | None:
        if isinstance(block, Mapping) and block.get("type") == "media":
            made = media_of(block)
            if isinstance(made, ImageData):
                return self._append(AssistantText(text="", model=model, images=[made]))
            return self._append(AssistantText(text=made, model=model))
        entry = super()._assistant_entry(block, batch_id, model, line)
        if isinstance(entry, ToolCall):
            named = describe(entry.name, entry.args, self.cwd)
            if named != entry.description:
                self.transcript.update(entry, description=named)
        return entry

    def _feed_user(self, content: str | list[Any], line: int) -> None:
        kept: list[Any] = []
        said: dict[str, Any] = {}
        for block in [content] if isinstance(content, str) else content:
            text = block if isinstance(block, str) else None
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text") if isinstance(block.get("text"), str) else None
            if text is not None:
                words, wrapped, notices = unwrap_prompt(text)
                for notice in notices:
                    self._append(SystemNotice(text=notice, level="info", subtype="mode_switch"))
                said.update(wrapped)
                if words:
                    kept.append({"type": "text", "text": words})
            elif isinstance(block, Mapping) and block.get("type") == "file":
                kept.append({"type": "text", "text": _file_line(block, self.cwd)})
            elif (
                isinstance(block, Mapping)
                and block.get("type") == "image"
                and "source" not in block
            ):
                image = _image(block)
                kept.append(
                    {"type": "image", "source": {"type": "base64", "media_type": image.media_type,
                                                 "data": image.data}}
                    if image is not None else {"type": "text", "text": "[image]"}
                )  # fmt: skip
            else:
                kept.append(block)
        before = len(self.transcript.entries)
        super()._feed_user(kept, line)
        if not said:
            return
        for entry in self.transcript.entries[before:]:
            if isinstance(entry, UserMessage):
                meta = {**entry.meta, **({"mode": said["mode"]} if "mode" in said else {})}
                self.transcript.update(entry, command=said.get("command"), meta=meta)

    def _settle(self, block: Mapping[str, Any], line: int) -> None:
        call_id = block.get("tool_use_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            super()._settle(block, line)  # warns of the unknown id
            return
        status, result, feedback, returned = tool_outcome(block)
        update: dict[str, Any] = {
            "status": status,
            "result": result,
            **agent_answer(call, returned),
        }
        if self.stamp is not None:
            update["ended_at"] = self.stamp
        self.transcript.update(call, **update)
        if feedback:
            self._append(UserMessage(text=feedback))


def agent_answer(call: ToolCall, returned: Any) -> dict[str, Any]:
    """The result and :class:`SubAgent` of a call that ran an agent, from what it returned
    (empty for any other call): a ``spawn_agent``'s ``SpawnAgentOutput`` {text, iterations,
    finishReason, usage}, whose answer is its text; a ``team_run_task``'s
    ``TeamRunTaskToolResult``, the teammate's answer (runMode sync) or the run it queued
    (async). The steps are in the agent's own file (or events), nested later."""
    if not isinstance(returned, Mapping):
        return {}
    if call.name == "spawn_agent" and "text" in returned:
        said = as_text(returned.get("text"))
    elif call.name == "team_run_task" and returned.get("dispatched") is True:
        said = as_text(returned.get("text")) or as_text(returned.get("message"))
    else:
        return {}
    return {
        "result": text_result(said, structured=returned),
        "subagent": subagent_of(call, returned),
    }


# --- detection ------------------------------------------------------------------------------------


def is_envelope(document: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``document`` is a messages file's object (``buildMessagesFilePayload``)."""
    return (
        isinstance(document, Mapping)
        and isinstance(document.get("messages"), list)
        and isinstance(document.get("sessionId"), str)
        and isinstance(document.get("agent"), str)
        and "version" in document
    )


_ENVELOPE = object()  # the envelope, weighed as one more record of the sample


def _classify(value: Any) -> int:
    if value is _ENVELOPE:
        return DISTINCTIVE
    if not isinstance(value, Mapping) or value.get("role") not in _ROLES:
        return NOT_MINE
    # Inside Cline's envelope, every message is Cline's.
    return DISTINCTIVE if isinstance(value.get("content"), (str, list)) else NOT_MINE


def detect(source: Source) -> Evidence:
    """A JSON object with Cline's envelope; its messages, each Cline's."""
    if not source.is_document or not is_envelope(source.document):
        return Evidence.none("no Cline messages file (version, sessionId, agent, messages)")
    return Evidence.of([_ENVELOPE, *sample(source.document["messages"])], _classify, "")


# --- reading --------------------------------------------------------------------------------------


def manifest_beside(path: Path | None) -> dict[str, Any]:
    """The session's manifest, ``<sessionId>.json`` beside ``<sessionId>.messages.json``; empty
    when there is none (it only adds the session's facts)."""
    if path is None or not path.name.endswith(MESSAGES_SUFFIX):
        return {}
    return json_object_file(path.with_name(path.name.removesuffix(MESSAGES_SUFFIX) + ".json"))


#: The manifest's ``status`` (``SESSION_STATUS_VALUES``, ``sdk/packages/shared/src/session/
#: records.ts``) of a session that did not complete.
_OUTCOMES = {"failed": "error", "cancelled": "cancelled"}


def _manifest_metadata(
    manifest: Mapping[str, Any], warn: Callable[[str], object]
) -> dict[str, Any]:
    """What the manifest says of the session (``SessionManifestSchema``); a time of it that
    is no time is left out, said to ``warn``."""
    found: dict[str, Any] = {}
    for key, name in (("cwd", "cwd"), ("workspace_root", "workspace_root"),
                      ("status", "status"), ("source", "source"), ("model", "model"),
                      ("provider", "model_provider")):  # fmt: skip
        if as_text(manifest.get(key)) is not None:
            found[name] = manifest[key]
    for key in ("started_at", "ended_at"):  # ISO 8601 (``new Date().toISOString()``)
        stamp = warned_timestamp(manifest.get(key), checked_timestamp, warn,
                                 "the session's manifest", name=key)  # fmt: skip
        if stamp is not None:
            found[key] = stamp
    if isinstance(manifest.get("exit_code"), int):
        found["exit_code"] = manifest["exit_code"]
    # The session's end as H-6's outcome, as the CLI's --json output says it (cline_json):
    # ``failed`` (an API error ended the run) is an error, ``cancelled`` (aborted) cancelled.
    status = manifest.get("status")
    if isinstance(status, str) and status in _OUTCOMES:
        found["outcome"] = _OUTCOMES[status]
    extra = manifest.get("metadata")
    if isinstance(extra, Mapping):
        for key in ("title", "mode"):
            if as_text(extra.get(key)) is not None:
                found[key] = extra[key]
    return found


def _messages(source: Source) -> tuple[Iterator[tuple[int, Any]], dict[str, Any]]:
    """The numbered messages of ``source`` and its envelope's other keys."""
    if not source.is_document:
        return source.records(), {}  # JSON lines of messages, each noted as it is read
    document = source.document
    if isinstance(document, Mapping) and isinstance(document.get("messages"), list):
        rest = {k: v for k, v in document.items() if k != "messages"}
        return enumerate(document["messages"], start=1), rest
    if isinstance(document, list):
        return enumerate(document, start=1), {}
    raise TranscriptFormatError(source.name, [NAME], 1, "no Cline messages file")


def read(source: Source) -> Transcript:
    """Every message of a messages file, with the usage, cost, model and time each records, the
    manifest beside it, and its sub-agents' and teammates' files nested in the calls that
    started their runs."""
    return _read(source, nest=True)


def _read(source: Source, *, nest: bool, skip: int = 0, cwd: str | None = None) -> Transcript:
    """``source`` read; the first ``skip`` messages are shown elsewhere (:func:`_earlier_runs`).
    ``cwd`` is the lead's, for a child's file: no manifest of its own says where it ran."""
    # The agent as Cline 3's task folders name it (``cline``), whatever app wrote the session.
    transcript = Transcript(metadata={"source_format": NAME, "agent": "cline"})
    manifest = manifest_beside(source.path)
    facts = _manifest_metadata(manifest, source.warn)
    cwd = as_text(facts.get("cwd")) or cwd
    builder = ClineMessagesBuilder(transcript, source.name, cwd=cwd)
    numbered, rest = _messages(source)
    costs: list[float] = []
    model = provider = None
    for line, message in numbered:
        if line <= skip:  # an earlier run of a teammate's conversation, shown with that run
            source.note(role_of(message), "mapped")
            continue
        stamp = None
        if isinstance(message, Mapping):
            stamp = warned_timestamp(message.get("ts"), ms_to_iso,
                                     partial(source.warn, line=line),
                                     f"message {line}", name="ts",
                                     unit="ms since the epoch")  # fmt: skip
        builder.stamp = stamp
        before = len(transcript.entries)
        try:
            builder.feed_noted(source, message, line, role_of(message))
        except Exception as exc:
            not_read(source, line, exc)
            if source.is_document:  # a line of JSON lines is noted by its warning
                source.note(role_of(message), "warned")
            continue
        added = transcript.entries[before:]
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            info = message.get("modelInfo")
            info = info if isinstance(info, Mapping) else {}
            model = as_text(info.get("id")) or model
            provider = as_text(info.get("provider")) or provider
            cost = _response(message, added, transcript)
            if cost is not None:
                costs.append(cost)
        for entry in added:
            if stamp is not None and entry.timestamp is None:
                update: dict[str, Any] = {"timestamp": stamp}
                if isinstance(entry, ToolCall):
                    update["started_at"] = stamp
                transcript.update(entry, **update)
    metadata = transcript.metadata
    system = rest.pop("system_prompt", None)
    if as_text(system) is not None:
        metadata["system"] = system
    for key, value in (("model", model), ("model_provider", provider)):
        if value is not None:
            metadata[key] = value
    for key, value in facts.items():
        metadata.setdefault(key, value)
    if costs:
        metadata["cost_usd"] = round(sum(costs), 6)
    if "agent" in rest:  # the file's part in the session (lead, subagent, teammate), not Cline
        rest["agent_role"] = rest.pop("agent")
    keep_wrapper_keys(transcript, rest)
    if nest:
        _nest_subagents(source, transcript)
    return transcript


def _response(
    message: Mapping[str, Any], added: list[Entry], transcript: Transcript
) -> float | None:
    """Put an assistant message's ``metrics`` on the entries it wrote; its cost."""
    metrics = message.get("metrics")
    if not isinstance(metrics, Mapping):
        return None
    usage = counted_usage(
        metrics.get("inputTokens"), metrics.get("outputTokens"),
        metrics.get("cacheReadTokens"), metrics.get("cacheWriteTokens"),
    )  # fmt: skip
    if usage is not None:
        usage.response_id = as_text(message.get("id"))
        attach_usage(added, usage, transcript)
    cost = metrics.get("cost")
    if not isinstance(cost, (int, float)) or isinstance(cost, bool) or not 0 <= cost < float("inf"):
        return None
    carrier = usage_carrier(added)
    if carrier is not None:
        carrier.meta["cost_usd"] = float(cost)
    return float(cost)


# --- sub-agents and teammates ---------------------------------------------------------------------

#: The call that starts the run a child's file holds, by the file's ``agent``: a sub-agent's
#: ``spawn_agent`` (``SpawnAgentInputSchema``), a teammate's ``team_run_task``
#: (``TeamRunTaskInputSchema``); each gives the child its ``task``.
_STARTED_BY = {SUBAGENT: "spawn_agent", TEAMMATE: "team_run_task"}
_STARTERS = frozenset(_STARTED_BY.values())


def root_messages(path: Path) -> Path:
    """The root session's messages file in the session folder ``path`` sits in."""
    return path.parent / (path.parent.name + MESSAGES_SUFFIX)


@dataclass
class _Child:
    """A sub-agent's or a teammate's file in the session's folder, opened, not yet read."""

    path: Path
    source: Source
    agent: str  # SUBAGENT or TEAMMATE
    #: A teammate's ``agentId`` (``origin.subagent``), which its ``team_run_task`` names.
    teammate: str | None
    #: Each prompt of its messages: the message's position and the words.
    prompts: list[tuple[int, str]]
    #: Its messages' ids, in order (a continued teammate's file repeats its earlier run's).
    ids: list[Any]


def _child(path: Path, source: Source) -> _Child | None:
    """The child ``source`` holds; None for a file that is no child's, or holds no message yet
    (the SDK writes an empty file when the run starts, its messages when it ends:
    ``initializeMessagesFile``, ``onTeamTaskEnd``, ``handleSubAgentEnd``)."""
    document = source.document if source.is_document else None
    if not is_envelope(document) or document["agent"] not in _STARTED_BY:
        return None  # no session, or another lead's
    messages = document["messages"]
    if not messages:
        return None
    teammate = None
    if document["agent"] == TEAMMATE:
        origin = document.get("origin")
        named = origin.get("subagent") if isinstance(origin, Mapping) else None
        # <agentId>__<teamTaskId>.messages.json (childArtifactFileStem)
        stem = path.name.removesuffix(MESSAGES_SUFFIX).rpartition("__")[0]
        teammate = named if isinstance(named, str) and named else stem
    prompts = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, (str, list)):
            continue
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and anthropic_blocks.is_result_block(b) for b in content
        ):
            continue
        words, _, _ = unwrap_prompt("\n\n".join(_texts(content)))
        if words and _synthetic(message, words) is None:
            prompts.append((index, words))
    ids = [m.get("id") if isinstance(m, Mapping) else None for m in messages]
    return _Child(path, source, document["agent"], teammate, prompts, ids)


def _gives(task: str, words: str, agent: str) -> bool:
    """Whether a prompt is the ``task`` a call gave: a sub-agent runs on the task itself
    (``spawn-agent-tool.ts``); a teammate's run may open with its unread mail, or a recovered
    run's notice, before it (``routeToTeammate``, ``buildRecoveredRunMessage``)."""
    if words == task:
        return True
    return agent == TEAMMATE and words.endswith(task) and words[-len(task) - 1].isspace()


def _match(
    child: _Child, calls: list[tuple[ToolCall, Transcript]]
) -> tuple[int, tuple[ToolCall, Transcript]] | None:
    """The prompt of ``child`` that opened its run, and the call (with the transcript it is in)
    that gave it. A sub-agent's run opens its file; a teammate's run is the last of its file
    (a run that continues the teammate's conversation holds the earlier runs' messages too)."""
    name = _STARTED_BY[child.agent]
    prompts = child.prompts[:1] if child.agent == SUBAGENT else reversed(child.prompts)
    for index, words in prompts:
        for found in calls:
            call = found[0]
            task = _task(call)
            if call.name != name or task is None:
                continue
            if child.teammate is not None and call.args.get("agentId") != child.teammate:
                continue
            if _gives(task.strip(), words, child.agent):
                return index, found
    return None


def _nest_subagents(source: Source, transcript: Transcript) -> None:
    """Each sub-agent's and teammate's file of the session's folder becomes the sub-agent of the
    call whose task its run was given: a ``spawn_agent`` or ``team_run_task`` call of the
    session, or of a sub-agent or teammate nested before it (a teammate routes tasks too)."""
    path = source.path
    if path is None or root_messages(path) != path:
        return  # no session folder: the calls' sub-agents are not here
    children = _children(source, path)
    if not children:
        return
    # Runs read first as if every teammate file were nested, so that a continued run skips
    # the earlier runs it repeats; read again, once, when a file of those runs matched no
    # call (its messages are then the continued run's to show).
    unshown: set[Path] = set()
    while True:
        runs, unmatched = _plan(children, transcript, unshown)
        lost = {c.path for c in unmatched if c.agent == TEAMMATE} - unshown
        if not lost or not any(run.skip for run in runs):
            break
        unshown |= lost
    for run in runs:
        source.accounting.merge(run.source.accounting)
        # Its source's warnings first, as a load puts them (settle_load).
        join_warnings(transcript.warnings, run.source.warnings)
        join_warnings(transcript.warnings, run.nested.warnings)
        _nest(run.call, run.owner, run.nested, run.child)
        cost = run.nested.metadata.get("cost_usd")
        if isinstance(cost, float):  # the session's cost holds its sub-agents', as tokens do
            total = transcript.metadata.get("cost_usd", 0.0)
            transcript.metadata["cost_usd"] = round(total + cost, 6)
    for child in unmatched:
        kind = "teammate" if child.agent == TEAMMATE else "sub-agent"
        where = _shown_in(child, runs)
        fate = (
            f"its messages are shown in the run that continued it, {where}"
            if where
            else "not shown"
        )
        source.warn(f"{kind} session {child.path.name} matches no "
                    f"{_STARTED_BY[child.agent]} call's task; {fate}")  # fmt: skip


def _children(source: Source, path: Path) -> list[_Child]:
    """The sub-agents' and teammates' files beside the session ``path``, opened, in the order
    their runs ended (so that runs given the same task take their calls in turn)."""
    children: list[_Child] = []
    unlisted = source.warn_not_listed(f"sub-agents' and teammates' sessions (*{MESSAGES_SUFFIX})")
    for sibling in sibling_files(path.parent, "*" + MESSAGES_SUFFIX, unlisted):
        if sibling == path:
            continue
        try:
            child_source, stream = open_source(sibling)
        except OSError as exc:
            source.warn(f"sub-agent session {sibling.name} could not be read: {exc.strerror}")
            continue
        if stream is not None:
            stream.close()  # a messages file is one JSON document, read whole when opened
        child = _child(sibling, child_source)
        if child is not None:
            children.append(child)
    children.sort(key=lambda c: (str(c.source.document.get("updated_at") or ""), c.path.name))
    return children


@dataclass
class _Run:
    """A child's run, read, and the call (in ``owner``) that started it."""

    child: _Child
    call: ToolCall
    owner: Transcript
    nested: Transcript
    #: The source it was read from (its accounting and warnings), the child's own left unread.
    source: Source
    #: Where its run opens in its file, and how many messages before it are shown elsewhere
    #: (the earlier runs of a teammate's conversation that their own files show).
    index: int
    skip: int


def _plan(
    children: list[_Child], transcript: Transcript, unshown: set[Path]
) -> tuple[list[_Run], list[_Child]]:
    """Each child's run read and matched to the call that started it, in the order matched,
    and the children that match no call; nothing is nested yet. A continued teammate run skips
    the earlier runs that files not in ``unshown`` hold (:func:`_earlier_runs`)."""
    waiting = list(children)
    # The calls that may have started a run, with the transcript each is in.
    calls = [(c, transcript) for c in transcript.tool_calls() if _task(c) is not None]
    runs: list[_Run] = []
    matched = True
    while waiting and matched:
        matched = False
        for child in list(waiting):
            found = _match(child, calls)
            if found is None:
                continue
            index, (call, owner) = found
            waiting.remove(child)
            calls.remove((call, owner))
            # A source of its own for each read, so a run read again is counted once.
            opened = child.source
            run_source = Source(
                opened.name, iter(()), path=opened.path, document=opened.document,
                warnings=list(opened.warnings), accounting=opened.accounting.copy(),
            )  # fmt: skip
            skip = _earlier_runs(child, index, children, unshown)
            # A sub-agent or teammate works in the lead's folder (the SDK gives it the lead's
            # tools and cwd).
            where = as_text(transcript.metadata.get("cwd"))
            nested = _read(run_source, nest=False, skip=skip, cwd=where)
            calls += [(c, nested) for c in nested.tool_calls() if _task(c) is not None]
            runs.append(_Run(child, call, owner, nested, run_source, index, skip))
            matched = True
    return runs, waiting


def _earlier_runs(child: _Child, index: int, others: list[_Child], unshown: set[Path]) -> int:
    """How many messages open a teammate's file before the run it holds that are shown
    elsewhere: the earlier runs its run continued (``continueConversation``), as far as other
    files of the teammate not in ``unshown`` hold them (the same messages, by id). Whole runs
    only: the count is where one of its runs opens."""
    if index == 0 or child.agent != TEAMMATE:
        return 0
    held = {
        i
        for c in others
        if c is not child and c.teammate == child.teammate and c.path not in unshown
        for i in c.ids
        if isinstance(i, str)
    }
    repeated = 0
    for i in child.ids[:index]:
        if not (isinstance(i, str) and i in held):
            break
        repeated += 1
    return max((at for at, _ in child.prompts if at <= repeated), default=0)


def _shown_in(child: _Child, runs: list[_Run]) -> str | None:
    """The run that shows every message of ``child``'s among the earlier runs it continued (a
    teammate's earlier run whose own file matched no call), if one does."""
    ids = {i for i in child.ids if isinstance(i, str)}
    for run in runs:
        earlier = run.child.ids[run.skip : run.index]
        if ids and run.child.teammate == child.teammate and ids <= set(earlier):
            return run.child.path.name.removesuffix(MESSAGES_SUFFIX)
    return None


def _nest(call: ToolCall, owner: Transcript, nested: Transcript, child: _Child) -> None:
    """Make ``nested``, the run of ``child``, the sub-agent of ``call`` in ``owner``."""
    stem = child.path.name.removesuffix(MESSAGES_SUFFIX)
    origin = nested.metadata.get("origin")
    agent_id = origin.get("subagent") if isinstance(origin, Mapping) else None
    # A teammate's agentId names it in every run; its file's name tells the runs apart.
    nested.metadata["agent_id"] = stem if child.agent == TEAMMATE else agent_id or stem
    agent = call.subagent or subagent_of(call, {})
    owner.update(call, subagent=replace(
        agent, transcript=nested, agent_id=nested.metadata["agent_id"],
        tool_count=len(nested.tool_calls()), steps_missing=False,
    ))  # fmt: skip


def _task(call: ToolCall) -> str | None:
    """The ``task`` a ``spawn_agent`` or ``team_run_task`` call gave the run it started."""
    task = call.args.get("task") if isinstance(call.args, Mapping) else None
    ok = call.name in _STARTERS and isinstance(task, str) and task.strip()
    return task if ok else None


def subagent_of(call: ToolCall, output: Mapping[str, Any]) -> SubAgent:
    """The :class:`SubAgent` a ``spawn_agent`` or ``team_run_task`` call ran, from what the tool
    returned (``SpawnAgentOutput``: ``usage.outputTokens``, ``finishReason``); a teammate is
    named by its ``agentId``. Its steps are in its own file (``steps_missing`` until that is
    found)."""
    usage = output.get("usage")
    finish = output.get("finishReason")
    args = call.args if isinstance(call.args, Mapping) else {}
    teammate = args.get("agentId") if call.name == _STARTED_BY[TEAMMATE] else None
    return SubAgent(
        name=teammate if isinstance(teammate, str) and teammate else None,
        task=_task(call),
        output_tokens=as_int(usage.get("outputTokens")) if isinstance(usage, Mapping) else None,
        reason=finish if isinstance(finish, str) and finish not in ("completed", "") else None,
        steps_missing=True,
    )
