"""Continue sessions (continuedev: the VS Code and JetBrains extensions, and the ``cn`` CLI,
``@continuedev/cli``): ``~/.continue/sessions/<sessionId>.json``, one JSON document a session,
beside a ``sessions.json`` index (``[{sessionId, title, dateCreated, workspaceDirectory,
messageCount}]``) that is no session and is not read.

The document is Continue's ``Session`` (``core/index.d.ts``; written by ``core/util/history.ts``
``HistoryManager.save``): ``{sessionId, title, workspaceDirectory, history, mode?,
chatModelTitle?, usage?}``, ``history`` a list of ``ChatHistoryItem``s ``{message, contextItems,
editorState?, modifiers?, promptLogs?, toolCallStates?, isGatheringContext?, reasoning?,
appliedRules?, conversationSummary?}``. Read here, item by item (``item/<role>`` in the
accounting):

- ``user`` → :class:`~turnfold.model.UserMessage` (``content``, a string or ``text`` /
  ``imageUrl`` parts); its ``contextItems`` (files, code, URLs the user attached, ``@``-mentions)
  each a :class:`~turnfold.model.SystemNotice` of subtype ``attachment`` before it, the content in
  ``meta["content"]``;
- ``thinking`` → :class:`~turnfold.model.Thinking` (``redactedThinking``: redacted, its data
  kept; a ``signature`` alone: encrypted);
- ``assistant`` → the item's ``reasoning`` (``<think>`` text the GUI split off) as thinking, then
  :class:`~turnfold.model.AssistantText` (``content``) with its model, and each of
  ``toolCalls`` a :class:`~turnfold.model.ToolCall` (one batch), its arguments parsed and
  described by what it acted on (a path relative to the workspace). The call's
  ``toolCallStates`` entry settles it: ``output`` (context items) is the result, and ``status``
  ``done`` → success, ``errored`` → error, ``canceled`` → cancelled, ``generating`` /
  ``generated`` / ``calling`` → unknown (the session ended, or moved on, before it ran);
  a state no call of the message names is added as a call of its own. ``message.usage`` is the
  response's usage: the CLI writes OpenAI's names (``prompt_tokens`` with the cached ones,
  ``completion_tokens`` with the reasoning, and ``model``), the extensions Continue's
  (``promptTokens``, ``completionTokens``, ``promptTokensDetails.cachedTokens`` …, read in the
  same convention, as the type documents it; ``core``'s Anthropic provider puts its uncached
  input there, which then reads low). ``promptLogs`` name the model (``modelTitle``);
- ``tool`` → the result of the call ``toolCallId`` names, where its state has no output (the
  extensions send the model this message; the CLI keeps the state alone); one no call asked
  for is warned of;
- ``system`` → ``metadata["system_prompt"]`` (the CLI drops it before saving);
- ``conversationSummary`` on an item → :class:`~turnfold.model.CompactionBoundary` after it
  (the history before it was summarised for the model);
- the session → ``metadata``: ``session_id``, ``title``, ``cwd`` (``workspaceDirectory``),
  ``mode``, ``model`` (``chatModelTitle``, else the responses'); the CLI's ``usage`` total is
  ``metadata["session_usage"]`` (its input and output; its cached count is not what the
  responses record) and ``totalCost`` ``metadata["cost_usd"]``.

Items carry no timestamps (only ``reasoning.startAt`` / ``endAt``, epoch ms: a ``startAt`` that
is no time is left out, said naming its item). Detection: a ``sessionId`` string and a
``history`` list whose items have a ``message`` object with a ``role`` and a ``contextItems``
list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    as_list,
    as_text,
    counted_usage,
    describe_args,
    epoch_iso,
    parse_arguments,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import Source
from turnfold.model import (
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import attach_usage, counts_of

NAME = "continue"
#: What Continue keeps its keys in, beside its sessions in ``~/.continue``
#: (continuedev/continue d0a3c0b6): ``config.yaml`` and the older ``config.json``, whose
#: models carry the ``apiKey`` onboarding writes (``core/util/paths.ts:114-121``;
#: ``setupProviderConfig`` of ``core/config/onboarding.ts:132`` through ``editConfigFile``,
#: ``core/util/paths.ts:279-289``; the CLI's ``extensions/cli/src/onboarding.ts:35-47``);
#: ``.env``, the secrets a config names (``core/util/paths.ts:377-378``, and a project's
#: ``.continue/.env``, ``extensions/cli/src/CLIPlatformClient.ts:66-69``); and the CLI's
#: ``auth.json``, its hub login's access and refresh tokens (``extensions/cli/src/auth/
#: authEnv.ts:5``, written by ``saveAuthConfig`` in ``auth/workos.ts:168-182`` before
#: 92b99cad). Beside them, what a config is made of: ``config.ts``, code that may set any
#: model's key (``core/util/paths.ts:140``), and ``out/config.js``, the same built
#: (``:171-173``); ``.continuerc.json``, a config to merge (``:210-212``); the blocks of a
#: folder's ``models/``, ``mcpServers/``, ``data/``, ``context/`` and the whole configs of its
#: ``agents/``, ``assistants/``, ``configs/`` (``getDotContinueSubDirs``,
#: ``core/config/loadLocalAssistants.ts:32-44,104-125``; ``mcpServers/*.json`` too,
#: ``core/context/mcp/json/loadJsonMcpConfigs.ts:25-43``): a model's ``apiKey`` and headers
#: (``packages/config-yaml/src/schemas/models.ts:17,181``), an MCP server's ``env``
#: (``schemas/index.ts:105``), a data destination's ``apiKey`` (``schemas/data/index.ts:80``),
#: a context provider's free ``params`` (``schemas/index.ts:14``: a Jira or GitLab token); and
#: ``index/globalContext.json``, whose ``mcpOauthStorage`` keeps the MCP servers' OAuth tokens
#: (``core/util/GlobalContext.ts:50-56``, ``core/util/paths.ts:94-95``). Both ``~/.continue``
#: and a project's ``.continue`` hold them, and ``$CONTINUE_GLOBAL_DIR`` moves the first
#: anywhere (``core/util/paths.ts:27-36``; the CLI's ``extensions/cli/src/env.ts:11``). The
#: blocks' folders are read at every depth (``walkDir``'s ``recursive: true``,
#: ``core/indexing/walkDir.ts:263``): ``models/**``. A team's remote config is cached in
#: ``.configs/<host>/`` (``config.json``, merged as the user's is, and ``config.js``, run:
#: ``getPathToRemoteConfig``, ``core/util/paths.ts:342-375``; ``core/config/load.ts:142-150,
#: 864-877``). The CLI's hooks, ``settings.json`` and ``settings.local.json`` of a
#: ``.continue``, carry an HTTP hook's ``headers`` (``extensions/cli/src/hooks/
#: hookConfig.ts:71-90``, ``hooks/types.ts:57-66``). A workspace's own ``.continuerc.json``,
#: and every ``<name>.continuerc.json`` beside it (a name that ``endsWith(".continuerc.json")``),
#: lies at its root, any folder (``getWorkspaceRcConfigs``, ``core/config/json/
#: loadRcConfigs.ts:12-19``): a config with models and their keys (``ContinueRcJson``, a
#: ``Partial<SerializedContinueConfig>``, ``core/index.d.ts:1767``). No file holds both keys
#: and a session: the sessions are ``sessions/*.json``.
CREDENTIALS = Credentials(
    folders=frozenset({".continue"}),
    files=frozenset({
        "config.yaml", "config.json", ".env", "auth.json", "config.ts", "out/config.js",
        ".continuerc.json", "index/globalContext.json", "models/**", "mcpServers/**", "data/**",
        "context/**", "agents/**", "assistants/**", "configs/**", ".configs/**",
        "settings.json", "settings.local.json",
    }),
    variables=frozenset({"CONTINUE_GLOBAL_DIR"}),
    endings=frozenset({".continuerc.json"}),
)  # fmt: skip

RECORDS = Records(
    mapped={
        "session": "metadata: session id, title, cwd (workspaceDirectory), mode, model "
        "(chatModelTitle); the CLI's usage total (metadata['session_usage']) and totalCost "
        "(metadata['cost_usd'])",
        "item/user": "user message (content text and images); each of its contextItems an "
        "attachment notice",
        "item/assistant": "thinking (the item's reasoning), assistant text with its model "
        "(usage.model, promptLogs' modelTitle), tool calls (toolCalls, one batch) settled by "
        "toolCallStates (output the result; done success, errored error, canceled cancelled, "
        "generating/generated/calling unknown); the response's usage (message.usage)",
        "item/thinking": "thinking (redactedThinking: redacted; a signature alone: encrypted)",
        "item/tool": "the result of the call toolCallId names, where its state has none",
        "item/system": "metadata['system_prompt']",
        "item/conversationSummary": "compaction boundary with the summary, after the item",
    },
    ignored={
        "item/editorState": "the editor's document of the user's input (the content restates it)",
        "item/modifiers": "input modifiers (useCodebase, noContext): settings, no conversation",
        "item/isGatheringContext": "a live UI flag",
        "item/appliedRules": "the rules in force for the response (the system prompt's parts)",
    },
)

#: ``toolCallStates[].status`` → the call's status (``core/index.d.ts`` ``ToolStatus``).
STATUSES: dict[str, ToolStatus] = {
    "done": "success",
    "errored": "error",
    "canceled": "cancelled",
    "generating": "unknown",
    "generated": "unknown",
    "calling": "unknown",
}
#: The item fields read (each in its ``item/<role>``) and those left out (``RECORDS``).
_READ_FIELDS = frozenset(
    {"message", "contextItems", "promptLogs", "toolCallStates", "reasoning", "conversationSummary"}
)
_IGNORED_FIELDS = frozenset({"editorState", "modifiers", "isGatheringContext", "appliedRules"})
_ROLES = frozenset({"user", "assistant", "thinking", "tool", "system"})
_LACKS = "no Continue session ({sessionId, history: [{message, contextItems}]})"


def _is_item(value: Any) -> bool:
    message = value.get("message") if isinstance(value, dict) else None
    return (
        isinstance(message, dict)
        and isinstance(message.get("role"), str)  # a list is no role, and no set key either
        and message.get("role") in _ROLES
        and isinstance(value.get("contextItems"), list)
    )


def detect(source: Source) -> Evidence:
    """A document with a ``sessionId`` string and a ``history`` of items, each a ``message``
    with a role and a ``contextItems`` list (the items are weighed, not the envelope alone)."""
    document = source.document if source.is_document else None
    if not (
        isinstance(document, dict)
        and isinstance(document.get("sessionId"), str)
        and isinstance(document.get("history"), list)
    ):
        return Evidence.none(_LACKS)
    history = document["history"]
    if not history:
        return Evidence(share=1.0, marks=1)
    return Evidence.of(history[:60], lambda v: DISTINCTIVE if _is_item(v) else NOT_MINE, _LACKS)


def read(source: Source) -> Transcript:
    if not source.head:
        raise TranscriptFormatError(source.name, [NAME], None, "the source is empty")
    reader = _Reader(source)
    for line, value in source.records():
        if not isinstance(value, dict):
            source.warn("not a Continue session document", line)
            continue
        reader.session(value, line)
    return reader.transcript


def _content(value: Any) -> tuple[str, list[ImageData]]:
    """A ``MessageContent``: a string, or ``text`` and ``imageUrl`` parts."""
    if isinstance(value, str):
        return value, []
    texts: list[str] = []
    images: list[ImageData] = []
    for part in as_list(value):
        if not isinstance(part, MAPPINGS):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "imageUrl":
            url = (part.get("imageUrl") or {}).get("url")
            image = _data_url(url)
            if image is not None:
                images.append(image)
            elif isinstance(url, str):
                texts.append(f"[image: {url}]")
    return "\n".join(texts), images


def _data_url(url: Any) -> ImageData | None:
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        return None
    head, data = url[5:].split(";base64,", 1)
    return ImageData(media_type=head or "image/png", data=data)


def _usage(raw: Any) -> Usage | None:
    """A response's usage: OpenAI's names (the CLI) or Continue's ``Usage`` (the extensions),
    input with its cached part and output with its reasoning, both ways."""
    if not isinstance(raw, MAPPINGS):
        return None
    if "prompt_tokens" in raw or "completion_tokens" in raw:
        prompt = raw.get("prompt_tokens_details")
        completion = raw.get("completion_tokens_details")
        prompt = prompt if isinstance(prompt, MAPPINGS) else {}
        completion = completion if isinstance(completion, MAPPINGS) else {}
        return counted_usage(
            raw.get("prompt_tokens"),
            raw.get("completion_tokens"),
            prompt.get("cached_tokens"),
            prompt.get("cache_write_tokens"),
            completion.get("reasoning_tokens"),
        )
    prompt = raw.get("promptTokensDetails")
    completion = raw.get("completionTokensDetails")
    prompt = prompt if isinstance(prompt, MAPPINGS) else {}
    completion = completion if isinstance(completion, MAPPINGS) else {}
    return counted_usage(
        raw.get("promptTokens"),
        raw.get("completionTokens"),
        prompt.get("cachedTokens"),
        prompt.get("cacheWriteTokens"),
        completion.get("reasoningTokens"),
    )


def _epoch_ms(value: Any) -> str | None:
    return epoch_iso(value, per_second=1000)


def _output_text(output: Any) -> str | None:
    """A state's ``output``: context items, their ``content`` joined."""
    if output is None:
        return None
    if isinstance(output, str):
        return output
    if not isinstance(output, list):
        return stringify(output)
    texts = [
        item["content"] if isinstance(item.get("content"), str) else stringify(item)
        for item in output
        if isinstance(item, MAPPINGS)
    ]
    return "\n".join(texts)


class _Reader:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.transcript = Transcript(metadata={"source_format": NAME, "agent": "continue"})
        self.calls: dict[str, ToolCall] = {}
        self.model: str | None = None
        self.line = 1
        self.unknown: set[str] = set()

    def add(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def warn(self, reason: str, record_type: str) -> None:
        self.source.warn(reason, self.line, record_type=record_type)

    def session(self, document: Mapping[str, Any], line: int) -> None:
        self.line = line
        history = document.get("history")
        if not isinstance(history, list):
            self.source.warn("a Continue session without a history list", line)
            return
        for index, item in enumerate(history):
            if not isinstance(item, MAPPINGS) or not isinstance(item.get("message"), MAPPINGS):
                self.warn(f"history[{index}]: an item without a message skipped", "item/(object)")
                continue
            self.item(item, index)
        self.settle()
        self.metadata(document)
        self.describe()
        self.source.mapped("session")

    def item(self, item: Mapping[str, Any], index: int) -> None:
        message = item["message"]
        role = message.get("role")
        kind = f"item/{role}"
        try:
            handler = getattr(self, f"_{role}") if role in _ROLES else None
            if handler is None:
                self.warn(f"history[{index}]: unknown role {role!r} skipped", kind)
                return
            handler(item, message, index)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            self.warn(f"history[{index}]: not read: {type(exc).__name__}: {exc}", kind)
            return
        self.source.mapped(kind)
        for key in item:
            if key in _IGNORED_FIELDS:
                self.source.ignored(f"item/{key}")
            elif key not in _READ_FIELDS and key not in self.unknown:
                self.unknown.add(key)  # a field of a newer version: said once, not per item
                self.source.warn(f"history[{index}]: item field {key!r} not read", self.line)
        summary = as_text(item.get("conversationSummary"))
        if summary is not None:
            self.add(CompactionBoundary(summary=summary, trigger="summary"))
            self.source.mapped("item/conversationSummary")

    def _user(self, item: Mapping[str, Any], message: Mapping[str, Any], index: int) -> None:
        for context in as_list(item.get("contextItems")):
            if isinstance(context, MAPPINGS):
                self.add(self._attachment(context))
        text, images = _content(message.get("content"))
        self.add(UserMessage(text=text, images=images, id=as_text(message.get("id")) or ""))

    def _attachment(self, context: Mapping[str, Any]) -> SystemNotice:
        name = as_text(context.get("name")) or "context"
        description = as_text(context.get("description"))
        uri = context.get("uri")
        where = as_text(uri.get("value")) if isinstance(uri, MAPPINGS) else None
        label = f"Attached {name}" + (f" ({where or description})" if where or description else "")
        meta: dict[str, Any] = {"content": context.get("content")}
        ident = context.get("id")
        if isinstance(ident, MAPPINGS) and as_text(ident.get("providerTitle")):
            meta["provider"] = ident["providerTitle"]
        if context.get("hidden"):
            meta["hidden"] = True
        return SystemNotice(text=label, subtype="attachment", meta=meta)

    def _system(self, item: Mapping[str, Any], message: Mapping[str, Any], index: int) -> None:
        text, _ = _content(message.get("content"))
        self.transcript.metadata["system_prompt"] = text

    def _thinking(self, item: Mapping[str, Any], message: Mapping[str, Any], index: int) -> None:
        text, _ = _content(message.get("content"))
        redacted = as_text(message.get("redactedThinking"))
        signature = as_text(message.get("signature"))
        if redacted is not None:
            entry = Thinking(text=text, form="redacted", data=redacted)
        elif not text and signature is not None:
            entry = Thinking(form="encrypted", data=signature)
        else:
            entry = Thinking(text=text)
        entry.id = as_text(message.get("id")) or ""
        self.add(entry)

    def _assistant(self, item: Mapping[str, Any], message: Mapping[str, Any], index: int) -> None:
        response: list[Entry] = []
        reasoning = item.get("reasoning")
        if isinstance(reasoning, MAPPINGS) and as_text(reasoning.get("text")):
            started = warned_timestamp(reasoning.get("startAt"), _epoch_ms,
                                       lambda reason: self.source.warn(reason, self.line),
                                       f"history[{index}]", name="reasoning.startAt",
                                       unit="ms since the epoch")  # fmt: skip
            thinking = Thinking(
                text=reasoning["text"],
                timestamp=started,
                streaming=bool(reasoning.get("active")),
            )
            response.append(self.add(thinking))
        raw_usage = message.get("usage")
        model = as_text(raw_usage.get("model")) if isinstance(raw_usage, MAPPINGS) else None
        for log in as_list(item.get("promptLogs")):
            if isinstance(log, MAPPINGS) and model is None:
                model = as_text(log.get("modelTitle"))
        self.model = model or self.model
        text, images = _content(message.get("content"))
        if text or images:
            entry = AssistantText(text=text, images=images, model=model)
            entry.id = as_text(message.get("id")) or ""
            response.append(self.add(entry))
        states = {
            s["toolCallId"]: s
            for s in as_list(item.get("toolCallStates"))
            if isinstance(s, MAPPINGS) and isinstance(s.get("toolCallId"), str)
        }
        batch = f"batch-{index}"
        for raw in as_list(message.get("toolCalls")):
            if isinstance(raw, MAPPINGS):
                call_id = as_text(raw.get("id")) or f"call-{index}-{len(response)}"
                response.append(self._call(call_id, raw, states.pop(call_id, None), batch))
        for call_id, state in states.items():  # a state whose call the message does not hold
            raw = state.get("toolCall")
            response.append(self._call(call_id, raw if isinstance(raw, MAPPINGS) else {}, state,
                                       batch))  # fmt: skip
        attach_usage(response, _usage(raw_usage), model=model)

    def _call(
        self,
        call_id: str,
        raw: Mapping[str, Any],
        state: Mapping[str, Any] | None,
        batch: str,
    ) -> ToolCall:
        function = raw.get("function")
        function = function if isinstance(function, MAPPINGS) else {}
        if state is not None and isinstance(state.get("toolCall"), MAPPINGS):
            stated = state["toolCall"].get("function")
            if isinstance(stated, MAPPINGS) and not as_text(function.get("name")):
                function = stated  # the streamed delta may be short of the settled call
        args = (
            state["parsedArgs"]
            if state is not None and isinstance(state.get("parsedArgs"), MAPPINGS)
            else parse_arguments(function.get("arguments"))
        )
        call = ToolCall(
            call_id=call_id,
            name=as_text(function.get("name")) or "(unnamed)",
            args=args,
            batch_id=batch,
        )
        if state is not None:
            status = state.get("status")
            call.status = STATUSES.get(status, "unknown") if isinstance(status, str) else "unknown"
            if isinstance(status, str) and status not in STATUSES:
                call.meta["continue_status"] = status
            text = _output_text(state.get("output"))
            if text is not None:
                call.result = text_result(text)
        self.calls[call_id] = call
        self.add(call)
        return call

    def _tool(self, item: Mapping[str, Any], message: Mapping[str, Any], index: int) -> None:
        call_id = message.get("toolCallId")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        text, _ = _content(message.get("content"))
        if call is None:
            self.warn(f"history[{index}]: a tool result for no call ({call_id!r})", "item/tool")
            self.add(SystemNotice(text=text, level="warning", subtype="orphan_result"))
            return
        if call.result is None:  # its state's output, where it has one, is the same text
            call.result = text_result(text)

    def settle(self) -> None:
        """A call no state settles (an old session, a tool message alone) has no recorded
        outcome unless a result came back for it."""
        for call in self.calls.values():
            if call.status == "pending":
                call.status = "success" if call.result is not None else "unknown"

    def describe(self) -> None:
        """Each call's description (what it acted on), its paths relative to the session's
        working folder, known once the session's fields are read."""
        cwd = as_text(self.transcript.metadata.get("cwd"))
        if cwd is not None and cwd.startswith("file://"):  # the extensions write a URI
            cwd = unquote(urlsplit(cwd).path) or None
        for call in self.calls.values():
            if call.description is None:
                described = describe_args(call.name, call.args, cwd)
                if described is not None:
                    self.transcript.update(call, description=described)

    def metadata(self, document: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        for key, value in (
            ("session_id", document.get("sessionId")),
            ("title", document.get("title")),
            ("cwd", document.get("workspaceDirectory")),
            ("mode", document.get("mode")),
            ("model", document.get("chatModelTitle") or self.model),
        ):
            if as_text(value) is not None:
                meta[key] = value
        usage = document.get("usage")
        if isinstance(usage, MAPPINGS):
            totals = counts_of(counted_usage(usage.get("promptTokens"),
                                             usage.get("completionTokens")))  # fmt: skip
            if totals:
                meta["session_usage"] = totals
            cost = usage.get("totalCost")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
                meta["cost_usd"] = round(float(cost), 6)
