"""Gemini CLI chat recordings (spec L-2.4): legacy JSON, and JSONL with ``$set`` / ``$rewindTo``.

Files live in ``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.json[l]``; a sub-agent's session
in ``chats/<parentSessionId>/<sessionId>.jsonl`` with ``kind: "subagent"`` (notes §3.1).

**Layouts.** Legacy (until ~v0.39): one JSON object ``{sessionId, projectHash, startTime,
lastUpdated, messages, summary?, kind?, directories?}``. JSONL (since 2026-04), read the way Gemini
CLI's ``loadConversationRecord()`` reads it:

- a metadata line ``{sessionId, projectHash, ...}``, and ``{"$set": {...}}`` updates to it;
- message lines: the *last* line with an ``id`` wins, in the position of the first one (a message is
  re-appended as tokens arrive and tool calls finish);
- ``{"$rewindTo": id}`` drops that message and every later one (all of them when the id is
  unknown, as Gemini CLI does; that case is warned about);
- ``{"$set": {"messages": [...]}}`` replaces the history. When it drops recorded messages it is a
  compaction (``/compress``): the dropped messages stay visible (they happened), a
  ``CompactionBoundary`` follows whose summary is the text of the checkpoint's leading new
  messages (the summary turn), and recorded messages it keeps are updated in place. A checkpoint
  that drops nothing (tool-output masking) only updates messages in place.
- A *resume sync* restates the history in API form: recorded messages by id with their content as
  ``functionCall`` parts and no ``toolCalls``, ``<id>_response`` copies of their function
  responses, or plain ``{role, parts}`` Content objects; Gemini CLI 0.61 may first write one with
  only the ``<session_context>`` message. A checkpoint all of whose messages restate recorded
  ones drops nothing (no compaction): recorded messages keep their calls, statuses, thoughts and
  first recorded time (a resume may stamp its copies with its own), and its function responses
  only fill in results never recorded (issue 23).

**Messages** (``type``):

- ``user`` → ``UserMessage`` from ``displayContent`` (the text as typed) or ``content``. Function
  responses in a user message (history synced back by Gemini CLI) fill in calls with no result.
  The ``<session_context>`` briefing Gemini CLI sends as the first user turn is a
  ``SystemNotice(subtype="session_context")``: the user did not type it. It shows the
  briefing's facts (date, system, directories) and how many lines follow (the workspace's tree
  of up to 200 items, the memory files), the whole briefing in ``meta["context"]``
  (:func:`session_context_notice`).
- ``gemini`` → ``thoughts[]`` become ``Thinking(form="summary")``: Gemini CLI records the model's
  *thought summaries* (``subject`` is the summary's bold title, ``description`` the rest), not the
  raw reasoning. ``content`` becomes ``AssistantText`` (``model``; ``tokens`` → ``Usage`` on the
  last text, or on its first thinking or call when the response wrote no text).
  ``toolCalls[]`` become ``ToolCall``: ``status`` success/error/cancelled as recorded, anything else
  ``unknown`` (an unfinished state is kept in ``meta["status"]``), except that a result whose text
  states a failure (``Exit Code: 1``: Gemini CLI records failed commands as ``success``) is
  ``error`` (``gemini_parts.stated_outcome``, issue 21.11); the result is the
  ``functionResponse`` output, else ``resultDisplay``; a diff display gives kind ``diff`` and
  ``write_todos`` kind ``todo``. Gemini CLI appends the calls of later model responses to the same
  message, recording each response's calls together with one timestamp, so calls that share a
  timestamp form one batch: ``batch_id`` is the message id, ``<id>#2`` for the next batch, ...
  ``ToolCall.timestamp`` is when the batch was recorded (after it ran), so no duration is derived.
- ``model`` (older files) is read as ``gemini``, its content from ``parts`` (issue 21.5); so is
  ``bob-shell``, IBM Bob Shell's name for it (a fork of Gemini CLI writing the same files:
  ``metadata["agent"]`` is ``bob-shell``), whose thoughts are recorded again as they stream
  (the same subject, the text so far): a thought the next one extends is left out. Its
  ``attempt_completion`` call's ``result`` is the answer, an ``AssistantText`` after the call.
- ``info`` → ``SystemNotice``; ``"Request cancelled."`` → ``AbortMarker`` (calls of the response
  before it that never finished become ``cancelled``); the auto-compression notice →
  ``CompactionBoundary`` with ``pre_tokens`` (newer versions say only the window's share, ``Context
  compressed from 68% to 3%.``: ``meta["pre_percent"]``, ``meta["post_percent"]``); a response the
  model stopped short (``⚠️  Response stopped due to malformed function call.``, the finish
  reason) → a warning ``SystemNotice(subtype="finish_reason")``. ``warning`` →
  ``SystemNotice(level="warning")``; ``error`` → ``AssistantError``.

A ``user`` message Gemini CLI wrote itself, its ``System: Please continue.`` after a response it
could not use, is a ``SystemNotice(subtype="continuation")``; a steering hint sent while the
agent worked shows the user's words (:mod:`turnfold.formats.gemini_injected`).

**Sub-agents.** ``delegate_to_agent``, agent tools (``codebase_investigator``), a call with
``agentId`` or an output ``"Subagent '…' finished"`` carry a ``SubAgent`` (name, task, termination
reason); so does a call whose ``resultDisplay`` is the agent's progress (``isSubagentProgress``:
a run cancelled midway reports no "finished"). Given a path, the child session
``chats/<sessionId>/<agentId>.json[l]`` is loaded as its transcript (tool count and output tokens
derived from it, duration from its start to its last update or recorded entry, the later).
Gemini CLI before 0.38 recorded no ``agentId`` (the child is named by an id of its own): a
call's run is then the child whose first prompt holds the call's task (``objective``,
``request``, …) and that started and was last updated before the call was recorded, the latest
such one. A child's own sub-agents nest in it in turn, down to
:data:`~turnfold.nesting.MAX_DEPTH` levels: a session one deeper, or one already shown above it
(a circle), is named in a warning on its call's line and not read. Sub-agent files no call links
to are reported in one warning.

Every line, and every message of a legacy file, is accounted for (``RECORDS``); a sub-agent
session's records count under the same types.

A session file Gemini CLI could not read and set aside, ``<session>.jsonl.unreadable-<ms>``
(:data:`UNREADABLE_COPY`), is read as any: its readable lines shown, each bad one warned of.

Metadata: ``session_id``, ``project_hash``, ``start_time``, ``last_updated``, ``title`` (the
session ``summary``), ``kind``, ``directories``, ``model`` (the last one used). Gemini CLI records
no cwd or version. A source with no Gemini record at all (e.g. a Claude Code file read with
``format="gemini"``) raises ``TranscriptFormatError`` rather than returning an empty transcript.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import NameSet, as_list, checked_timestamp, warned_timestamp
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.gemini_injected import continuation_notice, unwrap_steering
from turnfold.formats.gemini_parts import (
    FINAL_STATUSES,
    Assembler,
    PendingResult,
    as_parts,
    attach_child,
    build_result,
    corrected_status,
    images_of,
    is_agent_call,
    joined_text,
    make_call,
    model_entries,
    response_text,
    stated_outcome,
    usage_from,
)
from turnfold.formats.plain_names import is_plain_name
from turnfold.formats.protocol import read_through
from turnfold.formats.source import Source, join_warnings, open_source, sibling_files
from turnfold.formats.wording import notice as worded_notice
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    UserMessage,
    span_ms,
    utc,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.usage import attach_usage

NAME = "gemini"
#: What Gemini CLI keeps its secrets in, in ``~/.gemini``: the credentials of its own list of
#: sensitive files (``SENSITIVE_SETTINGS_FILENAMES`` of ``@google/gemini-cli``'s bundle): the
#: OAuth login (``oauth_creds.json``), its account (``google_accounts.json``), the encrypted
#: token store (``gemini-credentials.json``), the MCP servers' and A2A agents' OAuth tokens
#: (``mcp-oauth-tokens.json``, ``a2a-oauth-tokens.json``, and the store's ``-v2`` file). Beside
#: them, of ``~/.gemini`` and of a project's ``.gemini``: ``settings.json``, whose
#: ``mcpServers`` keep each server's ``env`` and ``headers`` as ``gemini mcp add`` wrote them
#: (``Storage.getGlobalSettingsPath``, ``getGeminiDir()``, ``packages/core/src/config/
#: storage.ts``), and ``.env``, read for keys (``GEMINI_API_KEY``) before any other
#: (``findEnvFile``, ``packages/cli/src/config/settings.ts``; @google/gemini-cli 0.61.0).
#: ``$GEMINI_CLI_HOME`` moves the folder that holds ``.gemini``, not ``.gemini``'s name
#: (``homedir()``, ``packages/core/src/utils/paths.ts``): no variable to name.
CREDENTIALS = Credentials(
    folders=frozenset({".gemini"}),
    files=frozenset({
        "oauth_creds.json", "google_accounts.json", "gemini-credentials.json",
        "mcp-oauth-tokens.json", "mcp-oauth-tokens-v2.json", "a2a-oauth-tokens.json",
        "settings.json", ".env",
    }),
)  # fmt: skip

#: The copy Gemini CLI keeps of a session file it could not read (no line of its metadata, nor
#: a legacy JSON document, could be parsed) when it writes the session again from memory on a
#: resume: the file renamed ``<session>.jsonl.unreadable-<Date.now()>`` beside it, in its
#: ``chats/`` folder, its bytes untouched, and the session written anew under the old name
#: (``rewriteConversationFile``, ``packages/core/src/services/chatRecordingService.ts`` of
#: ``@google/gemini-cli`` 0.61.0). Its session files are the names ending ``.json`` or
#: ``.jsonl``, so it neither lists, reads nor clears this one again: a session file the user
#: keeps, read as any (its bad lines warned of).
UNREADABLE_COPY = re.compile(r"\.jsonl\.unreadable-\d+\Z")


def is_unreadable_copy(name: str) -> bool:
    """Whether a file's ``name`` is Gemini CLI's copy of a session file it could not read
    (:data:`UNREADABLE_COPY`): a scan reads it, as it reads a name ending in ``.jsonl``."""
    return ".unreadable-" in name and UNREADABLE_COPY.search(name) is not None


#: What each record (JSONL line) and each message type becomes; see the module docstring.
RECORDS = Records(
    mapped={
        "metadata": "session metadata (the first line, and again on each resume)",
        "session": "a legacy JSON file: its metadata; its messages are counted by their type",
        "$set": "metadata update (lastUpdated, summary as the title, ...)",
        "$set/messages": "history checkpoint: a compaction when it drops messages, else an "
        "update in place (a resume's restatement of the history changes nothing)",
        "$rewindTo": "drops that message and every later one",
        "user": "user message (function responses in it fill in results); the "
        "`<session_context>` briefing a notice of its facts (the whole kept)",
        "gemini": "thought summaries, assistant text, tool calls with their results",
        "model": "older name of a gemini message (content in parts)",
        "info": "system notice; Request cancelled. is an abort, the compression notice a "
        "compaction",
        "warning": "system notice (warning)",
        "error": "assistant error",
    },
)

#: IBM Bob Shell, a fork of Gemini CLI, writes the same files and names the model's messages
#: after itself; read, and counted, as ``gemini`` messages.
BOB_SHELL = "bob-shell"
_MODEL_TYPES = NameSet({"gemini", "model", BOB_SHELL})
_MESSAGE_TYPES = NameSet({"user", "info", "warning", "error", *_MODEL_TYPES})
#: The environment Gemini CLI sends as the first user turn; the user did not type it.
SESSION_CONTEXT = re.compile(r"^\s*<session_context>.*</session_context>\s*$", re.DOTALL)
#: The agent id of Gemini CLI (``metadata["agent"]``, spec H-6) where a format Gemini CLI shares
#: with others says it wrote the file (its stream-json output, a saved chat): the id its chat
#: recordings' corpus rows give it, so one filter finds them all.
AGENT = "gemini-cli"
#: How Gemini CLI's briefing names the CLI (``getEnvironmentContext``); Qwen Code, a fork that
#: shares its tool names and compression, says "This is the Qwen Code." and writes no tag.
GEMINI_CLI_BRIEFING = "\nThis is the Gemini CLI. "
#: The briefing before Gemini CLI tagged it (0.29.0), in each version's first two lines: "This is
#: the Gemini CLI. We are setting up the context for our chat." and the date since 0.1.5,
#: "Okay, just setting up the context for our chat." / "Today is ..." before (0.1.4, which
#: names no CLI); Qwen Code's says "This is the Qwen Code." (@google/gemini-cli-core 0.1.4,
#: 0.1.5, 0.8.2, 0.28.2 ``client.js`` / ``environmentContext.js``; @qwen-code/qwen-code 0.24.4).
OLDER_BRIEFING = re.compile(
    r"\s*(?:This is the (?:Gemini CLI|Qwen Code)\. We are|Okay, just) setting up the context "
    r"for our chat\.\n\s*Today(?:'s date)? is "
)
#: The model's reply Gemini CLI put after an untagged briefing in the history a chat starts with
#: (``startChat`` until 0.8; from 0.9 the briefing ends "My setup is complete." instead), as
#: Qwen Code still does: the CLI's words, no turn of the model's.
BRIEFING_REPLY = "Got it. Thanks for the context!"
#: Where the briefing's facts (date, system, temporary and workspace directories) give way to
#: the workspace's tree of up to 200 items and the memory files (``getDirectoryContextString``);
#: the untagged briefing's heading, or the tree's own first line (before 0.1.19).
_TREE_HEADINGS = (
    "- **Directory Structure:**",
    "Here is the folder structure of the current working directories:",
)
_TREE_SUMMARY = "Showing up to "
#: The briefing's facts shown at most, as many as a long prompt shows before its cut.
_BRIEFING_LINES = 12
_BRIEFING_END = "</session_context>"
#: Gemini CLI's resume restates each model turn's function responses under ``<id>_response``.
_RESPONSE_SUFFIX = "_response"
CANCELLED_TEXT = "Request cancelled."  # useGeminiStream's notice when the user presses Esc
_COMPRESSED = re.compile(
    r"A compressed context will be sent for future messages "
    r"\(compressed from: (\d+|unknown) to (\d+|unknown) tokens\)"
)
#: The notice of an automatic compression since Gemini CLI 0.2x (``handleChatCompressionEvent``):
#: the context's share of the model's window before and after, not its tokens.
_COMPRESSED_SHARE = re.compile(r"Context compressed from (\d+)% to (\d+)%\.")
#: What useGeminiStream says of a response the model stopped short (``handleFinishedEvent``).
_STOPPED = "\N{WARNING SIGN}\N{VARIATION SELECTOR-16}  Response "
_SUBAGENT_DONE = re.compile(r"Subagent '([^']*)' finished")
_TERMINATION = re.compile(r"^Termination Reason: *(\S+)", re.MULTILINE)
#: Agent tools that are not named after their job (the agent's own name is the tool name).
_AGENT_NAMED_TOOLS = NameSet({"codebase_investigator"})
_TASK_KEYS = ("objective", "task", "prompt", "request", "question", "description", "query")
#: Header keys kept, under turnfold's names (``summary`` is the session's one-line title).
_METADATA_KEYS = {
    "sessionId": "session_id",
    "projectHash": "project_hash",
    "startTime": "start_time",
    "lastUpdated": "last_updated",
    "summary": "title",
    "kind": "kind",
    "directories": "directories",
}


def _is_header(value: Any) -> bool:
    """A metadata line, or a legacy file's one object (spec L-2: detection on the first record)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and (isinstance(value.get("projectHash"), str) or isinstance(value.get("messages"), list))
        and "uuid" not in value
        and "type" not in value
    )


def _is_gemini_record(value: Any) -> bool:
    return isinstance(value, dict) and (
        isinstance(value.get("$set"), dict)
        or isinstance(value.get("$rewindTo"), str)
        or (isinstance(value.get("id"), str) and value.get("type") in ("gemini", BOB_SHELL))
    )


def _classify_message(value: Any) -> int:
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        return NOT_MINE
    kind = value.get("type")
    if kind in ("gemini", BOB_SHELL) or (kind == "model" and isinstance(value.get("parts"), list)):
        return DISTINCTIVE
    return READABLE if kind in _MESSAGE_TYPES else NOT_MINE


def _classify(value: Any) -> int:
    if _is_header(value) or _is_gemini_record(value):
        return DISTINCTIVE
    return _classify_message(value)


_LACKS = "no Gemini CLI message ({id, type: user/gemini/info})"


def detect(source: Source) -> Evidence:
    """The header (``sessionId`` + ``projectHash`` or ``messages``), ``$set`` / ``$rewindTo``
    records and messages typed ``user`` / ``gemini`` / ``info`` …; a legacy file's messages are
    weighed, not only its header (a saved Anthropic chat has ``sessionId`` and ``messages`` too)."""
    document = source.document if source.is_document else None
    if isinstance(document, dict):
        if not _is_header(document):
            return Evidence.none("no sessionId header")
        messages = as_list(document.get("messages"))
        if not messages:
            return Evidence(share=1.0, marks=1)
        return Evidence.of(messages[:60], _classify_message, _LACKS)
    return Evidence.of(source.head_values(), _classify, _LACKS)


def read(source: Source) -> Transcript:
    return _read(source, depth=0, seen=frozenset())


def reader(source: Source) -> _Reader:
    """A pass over ``source``'s records fed one at a time, which a growing file's scan can
    pause and resume (:mod:`turnfold.formats.resume`)."""
    return _Reader(source)


def _read(source: Source, *, depth: int, seen: frozenset[Path]) -> Transcript:
    if not source.head:
        raise TranscriptFormatError(source.name, [NAME], None, "the source is empty")
    return read_through(_Reader(source, depth=depth, seen=seen))


@dataclass
class _Message:
    """One message record; replaced whole when a later line has the same id.

    Only the last version of a message is ever shown, so conversion waits for the end: a
    message re-written ten times as its tools finish is converted once.
    """

    type: str
    record: dict[str, Any] | None
    line: int
    items: list[Entry | PendingResult] | None = None
    marker: bool = False
    #: The line its ``timestamp`` was read from: an earlier one when a checkpoint restating
    #: the message kept the time first recorded (a time that is no time is said there).
    stamped_on: int | None = None


@dataclass
class _Reader:
    """The conversation as Gemini CLI rebuilds it: header, and messages by id in order."""

    source: Source
    header: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, _Message] = field(default_factory=dict)
    #: Ids a compaction dropped: kept for display, no longer part of the model's history.
    archived: set[str] = field(default_factory=set)
    #: What the recorded messages hold, to recognise a checkpoint that only restates them.
    known_calls: set[str] = field(default_factory=set)
    known_texts: set[tuple[str, str]] = field(default_factory=set)
    recognised: bool = False
    first_unknown: int | None = None
    model: str | None = None
    #: The agent, when a fork wrote the file (``bob-shell``); None: Gemini CLI.
    agent: str | None = None
    _boundaries: int = 0
    #: How deep a sub-agent's file this is, and the files read above it (no loops).
    depth: int = 0
    seen: frozenset[Path] = frozenset()

    def feed(self, line: int, value: Any) -> None:
        source = self.source
        if isinstance(value, MalformedLine):
            source.warn(value.reason, line)
        elif not isinstance(value, dict):
            self._unknown("not a JSON object", line)
        elif isinstance(value.get("$rewindTo"), str):
            self.recognised = True
            source.mapped("$rewindTo")
            self._rewind(value["$rewindTo"], line)
        elif isinstance(value.get("id"), str):
            self._message(value, line, account=True)
        elif isinstance(value.get("$set"), dict):
            self.recognised = True
            values = value["$set"]
            source.mapped("$set/messages" if isinstance(values.get("messages"), list) else "$set")
            self._update(values, line, per_message=False)
        elif _is_header(value):
            self.recognised = True
            # A legacy file is one object whose messages are accounted for one by one.
            source.mapped("session" if isinstance(value.get("messages"), list) else "metadata")
            self._update(value, line, per_message=True)
        else:
            self._unknown("unknown record skipped", line)

    def _unknown(self, reason: str, line: int) -> None:
        self.first_unknown = self.first_unknown or line
        self.source.warn(reason, line)

    # --- record kinds ----------------------------------------------------------------------------

    def _update(self, values: dict[str, Any], line: int, *, per_message: bool) -> None:
        for key in _METADATA_KEYS:
            if key in values:
                self.header[key] = values[key]
        messages = values.get("messages")
        if isinstance(messages, list):
            self._replace(messages, line, per_message=per_message)

    def _message(
        self, record: dict[str, Any], line: int, *, account: bool, checkpoint: bool = False
    ) -> None:
        """Record one message; ``account`` when it is a record of its own (a line, or a message
        of a legacy file), ``checkpoint`` when a ``$set.messages`` restates it."""
        kind = record.get("type")
        if not isinstance(kind, str) or kind not in _MESSAGE_TYPES:
            reason = f"unknown message type {kind!r} skipped"
            if account:
                self.first_unknown = self.first_unknown or line
                self.source.warn(reason, line, record_type=_text(kind) or "(message)")
            else:
                self.source.warn(reason, line)
            return
        self.recognised = True
        if kind == BOB_SHELL:
            self.agent = BOB_SHELL
        if account:
            self.source.mapped("gemini" if kind == BOB_SHELL else kind)
        old = self.messages.get(record["id"])
        if checkpoint and old is not None and _restatement(record, old.record):
            return  # the recorded message holds more (tool calls, their status, thoughts)
        stamped_on = line
        if checkpoint and old is not None and old.record is not None:
            # A checkpoint restating a message (a resume's sync) may stamp it with the moment
            # it was written; the message was sent when first recorded.
            stamp = old.record.get("timestamp")
            if stamp is not None and record.get("timestamp") != stamp:
                record = {**record, "timestamp": stamp}
                stamped_on = old.stamped_on or old.line
        self._learn(kind, record)
        # Assigning an existing key keeps its position: Gemini CLI's Map does the same.
        self.messages[record["id"]] = _Message(
            type=kind, record=record, line=line, stamped_on=stamped_on
        )

    def _learn(self, kind: str, record: dict[str, Any]) -> None:
        """Note the calls and texts of a recorded message (see :meth:`_restates`)."""
        content = _content(record)
        for part in content:
            for key in ("functionCall", "functionResponse"):
                inner = part.get(key)
                if isinstance(inner, dict) and isinstance(inner.get("id"), str):
                    self.known_calls.add(inner["id"])
        for call in as_list(record.get("toolCalls")):
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                self.known_calls.add(call["id"])
        text = joined_text(content, sep="\n").strip()
        if text:
            self.known_texts.add(("model" if kind in _MODEL_TYPES else kind, text))

    def _rewind(self, target: str, line: int) -> None:
        ids = list(self.messages)
        if target in self.messages:
            for key in ids[ids.index(target) :]:
                del self.messages[key]
        elif ids:
            reason = f"$rewindTo {target!r}: no such message; all earlier ones dropped"
            self.source.warn(reason + ", as Gemini CLI does", line)
            self.messages.clear()

    def _replace(self, messages: list[Any], line: int, *, per_message: bool) -> None:
        """A ``$set.messages`` checkpoint (or a legacy file's list): see the module docstring."""
        new: list[dict[str, Any]] = []
        for index, message in enumerate(messages):
            record = _as_record(message, f"\x00api-{line}-{index}")
            if record is not None:
                new.append(record)
        if len(new) < len(messages):
            skipped = len(messages) - len(new)
            self.source.warn(f"{skipped} message(s) without an id skipped", line)
            if per_message:
                self.source.accounting.note("(message without id)", "warned", skipped)
        if not per_message and new and all(self._restates(record) for record in new):
            self._sync(new, line)
            return
        ids = {m["id"] for m in new}
        dropped = [
            key
            for key, message in self.messages.items()
            if not message.marker and key not in ids and key not in self.archived
        ]
        if not dropped:
            for record in new:
                self._message(record, line, account=per_message, checkpoint=not per_message)
            return
        self.archived.update(dropped)
        # Leading new messages are the summary turn(s); kept ones follow, then any new ones.
        summary: list[Entry] = []
        later: list[dict[str, Any]] = []
        kept_seen = False
        for record in new:
            if record["id"] in self.messages:
                kept_seen = True
                self._message(record, line, account=False, checkpoint=True)
            elif kept_seen:
                later.append(record)
            else:
                summary += [i for i in self._convert(record, line, line) if isinstance(i, Entry)]
        self._boundary(summary, line)
        for record in later:
            self._message(record, line, account=False)

    def _restates(self, record: dict[str, Any]) -> bool:
        """Whether a checkpoint's message only repeats what is recorded (issue 23).

        On resume Gemini CLI rewrites the whole history in API form: recorded messages by id
        (their content as ``functionCall`` parts, ``toolCalls`` gone), a ``<id>_response`` copy
        of each model turn's function responses, or plain ``{role, parts}`` Content objects.
        """
        key = record["id"]
        if key in self.messages or (
            key.endswith(_RESPONSE_SUFFIX) and key[: -len(_RESPONSE_SUFFIX)] in self.messages
        ):
            return True
        if not key.startswith("\x00api-"):
            return False
        content = _content(record)
        calls = [
            inner["id"]
            for part in content
            for inner in (part.get("functionCall"), part.get("functionResponse"))
            if isinstance(inner, dict) and isinstance(inner.get("id"), str)
        ]
        if calls:
            return all(call in self.known_calls for call in calls)
        kind = "model" if record.get("type") in _MODEL_TYPES else "user"
        text = joined_text(content, sep="\n").strip()
        return not text or (kind, text) in self.known_texts

    def _sync(self, new: list[dict[str, Any]], line: int) -> None:
        """A checkpoint that restates the recorded history drops nothing (no compaction): the
        recorded messages keep their calls and statuses; its function responses only fill in
        results that were never recorded."""
        pending: list[Entry | PendingResult] = []
        for record in new:
            if record["id"] in self.messages:
                self._message(record, line, account=False, checkpoint=True)
            else:
                stamp = self._stamp(record, line)
                items = _user_items(record, stamp, line) if record["type"] == "user" else []
                pending += [i for i in items if isinstance(i, PendingResult)]
        if pending:
            key = f"\x00sync-{line}"
            self.messages[key] = _Message("sync", None, line, items=pending, marker=True)

    def _boundary(self, summary: list[Entry], line: int) -> None:
        self._boundaries += 1
        texts = [e.text for e in summary if isinstance(e, UserMessage | AssistantText) and e.text]
        stamp = next((e.timestamp for e in summary if e.timestamp), None)
        boundary = CompactionBoundary(summary="\n\n".join(texts) or None, timestamp=stamp)
        key = f"\x00compaction-{self._boundaries}"  # cannot collide with a message id
        self.messages[key] = _Message("compaction", None, line, items=[boundary], marker=True)

    # --- conversion ------------------------------------------------------------------------------

    def _items(self, message: _Message) -> list[Entry | PendingResult]:
        if message.items is None:
            assert message.record is not None  # only markers are made without a record
            message.items = self._convert(
                message.record, message.line, message.stamped_on or message.line
            )
            message.record = None  # the entries hold what is needed
        return message.items

    def _stamp(self, record: dict[str, Any], line: int) -> str | None:
        """A message's ``timestamp``; one that is no time is left out and said on its line
        (a message is converted once the file is read: its record is counted already)."""
        return warned_timestamp(record.get("timestamp"), checked_timestamp,
                                partial(self.source.warn, line=line),
                                f"message {record['id'][:80]}", name="timestamp")  # fmt: skip

    def _convert(
        self, record: dict[str, Any], line: int, stamped_on: int
    ) -> list[Entry | PendingResult]:
        kind = record.get("type")
        stamp = self._stamp(record, stamped_on)
        items: list[Entry | PendingResult]
        if kind == "user":
            continuation = continuation_notice(record, stamp)
            items = [continuation] if continuation else _user_items(record, stamp, line)
        elif kind in _MODEL_TYPES:
            items = list(self._model_entries(record, stamp, partial(self.source.warn, line=line)))
        else:
            notice = _notice(str(kind), record, stamp)
            items = [notice] if notice else []
        for item in items:
            if isinstance(item, UserMessage):
                unwrap_steering(item)
            if isinstance(item, Entry):
                item.meta["message_id"] = record["id"]
        return items

    def _model_entries(
        self, record: dict[str, Any], stamp: str | None, warn: Callable[[str], object]
    ) -> list[Entry]:
        message_id = record["id"]
        model = record.get("model") if isinstance(record.get("model"), str) else None
        self.model = model or self.model
        raw_calls = record.get("toolCalls")
        calls = [c for c in raw_calls if isinstance(c, dict)] if isinstance(raw_calls, list) else []
        call_ids = frozenset(c["id"] for c in calls if isinstance(c.get("id"), str))
        raw_thoughts = _settled(as_list(record.get("thoughts")))
        what = f"message {message_id[:80]}"
        thoughts = [t for t in (_thought(r, stamp, warn, what) for r in raw_thoughts) if t]
        parts = _content(record)
        if thoughts:  # a resume's copy of the message repeats them as thought parts
            parts = [p for p in parts if p.get("thought") is not True]
        entries: list[Entry] = list(thoughts)
        entries += model_entries(
            parts,
            timestamp=stamp,
            batch_id=message_id,
            model=model,
            usage=None,
            thought_form="summary",
            skip_call_ids=call_ids,
        )
        entries += _tool_calls(calls, message_id, warn)
        entries += _completions(entries, model)
        attach_usage(entries, usage_from(record.get("tokens")))
        return entries

    # --- the end ---------------------------------------------------------------------------------

    def finish(self) -> Transcript:
        """The transcript of the records fed; the reader takes no more after it."""
        if not self.recognised:
            reason = "no Gemini CLI chat record (header, message, $set or $rewindTo) found"
            raise TranscriptFormatError(self.source.name, [NAME], self.first_unknown, reason)
        entries = self.entries()
        lines = {message_id: message.line for message_id, message in self.messages.items()}
        _link_subagents(self.source, entries, self.header.get("sessionId"), depth=self.depth,
                        seen=self.seen, lines=lines)  # fmt: skip
        return Transcript(entries, metadata=self.metadata())

    def entries(self) -> list[Entry]:
        """The final entries, results paired and interrupted calls marked ``cancelled``."""
        # Synced function responses only fill gaps: a masked copy must not replace the output.
        assembler = Assembler(self.source, warn_unmatched=False, overwrite=False)
        last_calls: list[ToolCall] = []
        for message in self.messages.values():
            items = self._items(message)
            for item in items:
                if isinstance(item, AbortMarker):
                    _cancel_unfinished(last_calls)
                previous = assembler.entries[-1] if assembler.entries else None
                if isinstance(item, CompactionBoundary) and isinstance(
                    previous, CompactionBoundary
                ):
                    _merge_boundaries(previous, item)  # notice and checkpoint: one compaction
                    continue
                assembler.add(item)
            if message.type in _MODEL_TYPES:
                last_calls = [i for i in items if isinstance(i, ToolCall)]
            elif message.type == "user":
                last_calls = []
        return assembler.entries

    def metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {"source_format": NAME}
        for key, name in _METADATA_KEYS.items():
            value = self.header.get(key)
            if (isinstance(value, str) and value) or _is_str_list(value):
                metadata[name] = value
        if self.model:
            metadata["model"] = self.model
        if self.agent:
            metadata["agent"] = self.agent
        return metadata


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _content(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's parts: ``content``, or ``parts`` in older files (issue 21.5)."""
    return as_parts(record["content"] if "content" in record else record.get("parts"))


def _as_record(message: Any, key: str) -> dict[str, Any] | None:
    """A checkpoint's message as a message record: a record with an id as it is, an API-form
    Content object (``{role: "user"|"model", parts}``, written on resume) under ``key``."""
    if not isinstance(message, dict):
        return None
    if isinstance(message.get("id"), str):
        return message
    role, parts = message.get("role"), message.get("parts")
    if role in ("user", "model") and isinstance(parts, list):
        kind = "gemini" if role == "model" else "user"
        return {"id": key, "type": kind, "content": parts}
    return None


#: Fields only Gemini CLI's own recording writes; an API-form copy of the message has none.
_RECORDED_FIELDS = ("toolCalls", "thoughts", "tokens", "model")


def _restatement(new: dict[str, Any], old: dict[str, Any] | None) -> bool:
    """Whether a checkpoint's copy ``new`` of a recorded message ``old`` holds less than it
    (the API form a resume writes: no tool calls, statuses, thoughts or tokens)."""
    return old is not None and any(k in old and k not in new for k in _RECORDED_FIELDS)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _user_items(
    record: dict[str, Any], stamp: str | None, line: int
) -> list[Entry | PendingResult]:
    content = _content(record)
    text = joined_text(as_parts(record.get("displayContent")), sep="\n") or joined_text(
        content, sep="\n"
    )
    images = images_of(content)
    items: list[Entry | PendingResult] = []
    if SESSION_CONTEXT.match(text) and not images:
        # Gemini CLI's environment briefing, sent as the first user turn: the CLI speaking.
        items.append(session_context_notice(text, stamp))
    elif text or images:
        message = UserMessage(text=text, timestamp=stamp)
        if images:
            message.meta["images"] = len(images)  # a prompt's pasted images are not modelled
        items.append(message)
    for part in content:
        response = part.get("functionResponse")
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            items.append(_pending(response, stamp, line))
    return items


def _pending(response: dict[str, Any], stamp: str | None, line: int) -> PendingResult:
    text, failed = response_text(response.get("response"))
    name = response.get("name")
    result = build_result(
        name if isinstance(name, str) else "",
        text=text,
        display=None,
        images=images_of(response.get("parts")),
        failed=failed,
    )
    status: ToolStatus | None = "error" if failed else stated_outcome(text)
    return PendingResult(response["id"], result, status, ended_at=stamp, line=line)


def _completions(entries: list[Entry], model: str | None) -> list[AssistantText]:
    """The answers of Bob Shell's ``attempt_completion`` calls: the ``result`` it shows the
    user as the task's end (the call stays, as recorded)."""
    return [
        AssistantText(text=e.args["result"], model=model, timestamp=e.timestamp)
        for e in entries
        if isinstance(e, ToolCall)
        and e.name == "attempt_completion"
        and isinstance(e.args, dict)
        and isinstance(e.args.get("result"), str)
        and e.args["result"].strip()
    ]


def _settled(thoughts: list[Any]) -> list[Any]:
    """The thoughts, each streamed snapshot left out: Bob Shell records a thought again as it
    grows (the same subject, the text so far), so one the next extends is part of it."""

    def grows(thought: Any, after: Any) -> bool:
        if not isinstance(thought, dict) or not isinstance(after, dict):
            return False
        text, more = thought.get("description"), after.get("description")
        subject = thought.get("subject")
        return (
            isinstance(text, str)
            and isinstance(more, str)
            and more.startswith(text)
            and subject in ("", after.get("subject"))
        )

    if len(thoughts) < 2:
        return thoughts
    return [
        t for t, after in zip(thoughts, [*thoughts[1:], None], strict=True) if not grows(t, after)
    ]


def _thought(
    thought: Any, stamp: str | None, warn: Callable[[str], object], what: str
) -> Thinking | None:
    if not isinstance(thought, dict):
        return None
    subject = thought.get("subject") if isinstance(thought.get("subject"), str) else ""
    description = thought.get("description")
    description = description if isinstance(description, str) else ""
    text = f"**{subject}**\n\n{description}" if subject and description else subject or description
    if not text:
        return None
    own = warned_timestamp(thought.get("timestamp"), checked_timestamp, warn,
                           f"a thought of {what}", name="timestamp")  # fmt: skip
    return Thinking(text=text, form="summary", timestamp=own or stamp)


def session_context_notice(text: str, timestamp: str | None = None) -> SystemNotice:
    """Gemini CLI's ``<session_context>`` briefing as a notice that shows its facts and how
    many lines follow them (the tree and memory, hundreds of lines the model reads), the whole
    briefing in ``meta["context"]``; a briefing of facts alone is shown whole.

    >>> briefing = "<session_context>\\nThis is the Gemini CLI.\\n- **Directory Structure:**"
    >>> session_context_notice(briefing + "\\n\\n/w/\\n├───a\\n</session_context>").text
    '<session_context>\\nThis is the Gemini CLI.\\n… 3 more lines (kept in the transcript)'
    """
    lines = text.strip().split("\n")
    shown = 1
    while (
        shown < min(len(lines), _BRIEFING_LINES)
        and lines[shown].strip()
        and lines[shown].strip() not in _TREE_HEADINGS
        and not lines[shown].strip().startswith(_TREE_SUMMARY)
    ):
        shown += 1
    # The lines left out that say something: the blank ones the template leaves where the
    # tree or memory is off, and the closing tag, are no part of what is left out.
    left_out = sum(1 for line in lines[shown:] if line.strip() not in ("", _BRIEFING_END))
    if left_out < 2:  # a cut that saves a line or none says more than it hides
        return SystemNotice(text=text, subtype="session_context", timestamp=timestamp)
    said = {"facts": "\n".join(lines[:shown]), "count": left_out}
    cut = worded_notice("reader.session_context_cut", said, subtype="session_context",
                        timestamp=timestamp)  # fmt: skip
    cut.meta["context"] = text
    return cut


def is_briefing(text: str) -> bool:
    """Whether a user content's text is Gemini CLI's briefing, tagged (``<session_context>``)
    or in an older version's words (:data:`OLDER_BRIEFING`): the CLI speaking, not the user."""
    return SESSION_CONTEXT.match(text) is not None or OLDER_BRIEFING.match(text) is not None


def names_gemini_cli(briefing: str) -> bool:
    """Whether a briefing names Gemini CLI (its first line after the tag, if any)."""
    return GEMINI_CLI_BRIEFING in f"\n{briefing.lstrip()[:200]}"


def _notice(kind: str, record: dict[str, Any], stamp: str | None) -> Entry | None:
    text = joined_text(as_parts(record.get("content")), sep="\n")
    if not text.strip():
        return None
    if kind == "error":
        return AssistantError(message=text, timestamp=stamp)
    if kind == "warning":
        return SystemNotice(text=text, level="warning", subtype="warning", timestamp=stamp)
    if text.strip() == CANCELLED_TEXT:
        return AbortMarker(reason=text.strip(), timestamp=stamp)
    match = _COMPRESSED.search(text)
    if match:
        boundary = CompactionBoundary(trigger="auto", pre_tokens=_int(match[1]), timestamp=stamp)
        if _int(match[2]) is not None:
            boundary.meta["post_tokens"] = _int(match[2])
        return boundary
    if share := _COMPRESSED_SHARE.fullmatch(text.strip()):
        boundary = CompactionBoundary(trigger="auto", timestamp=stamp)
        boundary.meta.update(pre_percent=int(share[1]), post_percent=int(share[2]))
        return boundary
    if text.startswith(_STOPPED):  # MAX_TOKENS, SAFETY, MALFORMED_FUNCTION_CALL, ...
        return SystemNotice(text=text, level="warning", subtype="finish_reason", timestamp=stamp)
    return SystemNotice(text=text, level="info", subtype="info", timestamp=stamp)


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def _tool_calls(
    records: list[dict[str, Any]], message_id: str, warn: Callable[[str], object]
) -> list[Entry]:
    calls: list[Entry] = []
    batch, previous = 1, None
    for index, record in enumerate(records):
        stamp = record.get("timestamp")
        if index and stamp != previous:
            batch += 1  # a later model response's calls, appended to the same message
        previous = stamp
        batch_id = message_id if batch == 1 else f"{message_id}#{batch}"
        calls.append(_tool_call(record, batch_id, warn))
    return calls


def _tool_call(record: dict[str, Any], batch_id: str, warn: Callable[[str], object]) -> ToolCall:
    named = record.get("id")
    what = f"tool call {named[:80]}" if isinstance(named, str) and named else "a tool call"
    stamp = warned_timestamp(record.get("timestamp"), checked_timestamp, warn, what,
                             name="timestamp")  # fmt: skip
    call = make_call(
        record.get("id"), record.get("name"), record.get("args"), timestamp=stamp,
        batch_id=batch_id, cwd=None,
    )  # fmt: skip
    raw = record.get("status")
    call.status = FINAL_STATUSES.get(raw, "unknown") if isinstance(raw, str) else "unknown"
    if isinstance(raw, str) and raw not in FINAL_STATUSES:
        call.meta["status"] = raw  # validating / scheduled / executing / awaiting_approval
    if isinstance(record.get("displayName"), str):
        call.meta["display_name"] = record["displayName"]
    text, failed, images = _result_parts(record.get("result"))
    if failed:
        call.status = "error" if call.status != "cancelled" else call.status
    else:  # a failed command is recorded as a success; its output says otherwise (21.11)
        call.status = corrected_status(call.status, text)
    call.result = build_result(
        call.name,
        text=text,
        display=record.get("resultDisplay"),
        args=call.args,
        images=images,
        failed=failed or call.status == "error",
        cancelled=call.status == "cancelled",
    )
    agent_id = record.get("agentId") if isinstance(record.get("agentId"), str) else None
    display = record.get("resultDisplay")
    # An agent's progress is its display however its run ended (a cancelled one says no
    # "Subagent … finished"): ``SubagentProgress``, ``local-invocation.ts``.
    progress = isinstance(display, dict) and display.get("isSubagentProgress") is True
    if progress or _spawns_agent(call, agent_id):
        call.subagent = _subagent(call, agent_id)
        if call.result is not None and call.result.kind == "text":
            call.result.kind = "subagent"
    return call


def _result_parts(result: Any) -> tuple[str | None, bool, list[ImageData]]:
    """(text, reports an error, images) of a tool call's ``result`` parts."""
    parts = as_parts(result)
    texts: list[str] = []
    failed = False
    images = images_of(parts)
    for part in parts:
        response = part.get("functionResponse")
        if isinstance(response, dict):
            text, error = response_text(response.get("response"))
            texts += [text] if text else []
            failed = failed or error
            images += images_of(response.get("parts"))
        elif isinstance(part.get("text"), str) and part["text"]:
            texts.append(part["text"])
    return ("\n".join(texts) or None), failed, images


def _spawns_agent(call: ToolCall, agent_id: str | None) -> bool:
    output = call.result.text if call.result else None
    return (
        is_agent_call(call.name)
        or call.name in _AGENT_NAMED_TOOLS
        or agent_id is not None
        or bool(output and _SUBAGENT_DONE.match(output))
    )


def _subagent(call: ToolCall, agent_id: str | None) -> SubAgent:
    args = call.args if isinstance(call.args, dict) else {}
    output = call.result.text if call.result and call.result.text else ""
    done = _SUBAGENT_DONE.match(output)
    name = args.get("agent_name")
    if not isinstance(name, str) or not name:
        name = done[1] if done else (None if is_agent_call(call.name) else call.name)
    task = next((args[k] for k in _TASK_KEYS if isinstance(args.get(k), str) and args[k]), None)
    reason = _TERMINATION.search(output)
    return SubAgent(name=name, task=task, agent_id=agent_id, reason=reason[1] if reason else None)


def _cancel_unfinished(calls: list[ToolCall]) -> None:
    """Calls of the interrupted response that never finished were cut off (spec L-3)."""
    for call in calls:
        if call.status == "unknown" and (call.result is None or "status" in call.meta):
            call.status = "cancelled"


def _merge_boundaries(kept: CompactionBoundary, other: CompactionBoundary) -> None:
    kept.summary = kept.summary or other.summary
    kept.trigger = kept.trigger or other.trigger
    kept.pre_tokens = kept.pre_tokens if kept.pre_tokens is not None else other.pre_tokens
    kept.timestamp = kept.timestamp or other.timestamp
    kept.meta = {**other.meta, **kept.meta}


# --- sub-agent sessions -------------------------------------------------------------------------


def _link_subagents(
    source: Source,
    entries: list[Entry],
    session_id: Any,
    *,
    depth: int,
    seen: frozenset[Path],
    lines: dict[str, int],
) -> None:
    """Attach ``chats/<sessionId>/<agentId>.json[l]`` to the call with that ``agentId``; a call
    that names none, the run that was given its task (:func:`_run_of`). ``source`` is a
    session ``depth`` sub-agents deep, nested in the sessions ``seen`` (resolved paths);
    ``lines`` the line of each of its messages, by id."""
    calls = [e for e in entries if isinstance(e, ToolCall) and e.subagent]
    if source.path is None or not isinstance(session_id, str) or not session_id or not calls:
        return
    if not is_plain_name(session_id):
        # Gemini CLI's ids are UUIDs: a folder named by any other id could lie outside the
        # session's own (``..``, an absolute path), where a hostile file would have it read.
        reason = (f"sessionId {session_id!r} is not a plain name: the sub-agents' sessions, in "
                  "the folder it would name beside this file, are not looked for")  # fmt: skip
        source.warn(reason)
        return
    seen = seen | {source.path.resolve()}  # the top-level session too: a child naming it
    folder = source.path.parent / session_id
    unlisted = source.warn_not_listed("sub-agents' sessions (*.json, *.jsonl)")
    files = {p.stem: p for p in sibling_files(folder, "*.json*", unlisted)
             if p.suffix in (".json", ".jsonl")}  # fmt: skip
    linked: set[str] = set()
    for call in calls:
        agent = call.subagent
        assert agent is not None
        path = files.get(agent.agent_id) if agent.agent_id else None
        if path is None or agent.agent_id in linked:
            continue
        line = _line_of(call, lines)
        _attach(source, agent, path, depth=depth, seen=seen, linked=linked, line=line)
    unnamed = [c for c in calls if c.subagent and not c.subagent.agent_id]
    if unnamed and len(files) > len(linked):
        # Gemini CLI recorded no agentId before 0.38 (#25092): the child session's id is
        # the executor's own (``Math.random().toString(36)``), named nowhere in the parent.
        runs = {p: _peek(p) for stem, p in files.items() if stem not in linked}
        for call in unnamed:
            path = _run_of(call, runs)
            if path is not None:
                del runs[path]
                agent = call.subagent
                assert agent is not None
                line = _line_of(call, lines)
                if _attach(source, agent, path, depth=depth, seen=seen, linked=linked, line=line):
                    agent.agent_id = path.stem
    if len(files) > len(linked):
        count = len(files) - len(linked)
        source.warn(f"{count} sub-agent session(s) in {folder.name}/ not linked to a tool call")


def _attach(
    source: Source,
    agent: SubAgent,
    path: Path,
    *,
    depth: int,
    seen: frozenset[Path],
    linked: set[str],
    line: int | None,
) -> bool:
    """Load the child session at ``path`` as ``agent``'s transcript, its call on ``line``;
    whether it loaded."""
    if _not_nested(source, path, depth=depth, seen=seen, line=line):
        linked.add(path.stem)  # its call names it, and a warning says why it is not shown
        return False
    child = _load_child(source, path, depth=depth, seen=seen, line=line)
    if child is None:
        return False
    linked.add(path.stem)
    attach_child(agent, child)
    if agent.duration_ms is None:
        # The child's ``lastUpdated`` may stop at its first prompt (Gemini CLI 0.61 updates it
        # no more as the run goes on): the run lasts until its last recorded entry.
        stamps = [child.metadata.get("last_updated"), *(e.timestamp for e in child.entries)]
        moments = [moment for moment in map(utc, stamps) if moment is not None]
        end = max(moments).isoformat() if moments else None
        agent.duration_ms = span_ms(child.metadata.get("start_time"), end)
    return True


@dataclass
class _Run:
    """What a child session's file says of its run before it is read: when it started and
    was last updated, and its first prompt (the task, after the context the CLI gives)."""

    start: Any
    last: Any
    prompt: str


def _peek(path: Path) -> _Run | None:
    """The :class:`_Run` of the child session at ``path`` (its JSON, or the first lines of
    its JSON lines); None when it cannot be read."""
    try:
        opened, stream = open_source(path)
    except OSError:
        return None
    if stream is not None:
        stream.close()
    if opened.is_document:
        document = opened.document
        if not isinstance(document, dict):
            return None
        records = [document, *as_list(document.get("messages"))]
    else:
        records = opened.head_values()
    header = next((r for r in records if isinstance(r, dict) and "sessionId" in r), {})
    last = header.get("lastUpdated")
    for record in records:
        update = record.get("$set") if isinstance(record, dict) else None
        if isinstance(update, dict) and "lastUpdated" in update:
            last = update["lastUpdated"]
    prompt = next(
        (
            joined_text(as_parts(r.get("content")))
            for r in records
            if isinstance(r, dict) and r.get("type") == "user"
        ),
        "",
    )
    return _Run(header.get("startTime"), last, prompt)


def _run_of(call: ToolCall, runs: dict[Path, _Run | None]) -> Path | None:
    """The child run ``call`` started, among ``runs``: one whose prompt holds the call's task
    (the agent's prompt template wraps it), started before the call was recorded (after it
    ended) and last updated by then; the latest such one."""
    agent = call.subagent
    task = agent.task.strip() if agent and isinstance(agent.task, str) else ""
    found: list[tuple[str, Path]] = []
    for path, run in runs.items():
        if run is None or not isinstance(run.start, str) or (task and task not in run.prompt):
            continue
        if span_ms(run.start, call.timestamp) is None:
            continue  # started after the call was recorded, or no time to tell
        if run.last is not None and span_ms(run.last, call.timestamp) is None:
            continue
        found.append((run.start, path))
    return max(found)[1] if found else None


def _line_of(call: ToolCall, lines: dict[str, int]) -> int | None:
    """The line of the message that holds ``call``: its batch is the message's id, or that id
    and ``#2`` for the message's second batch (:func:`_tool_calls`)."""
    batch = call.batch_id or ""
    return lines.get(batch, lines.get(batch.rpartition("#")[0]))


def _not_nested(
    source: Source, path: Path, *, depth: int, seen: frozenset[Path], line: int | None
) -> bool:
    """Whether the child session at ``path``, named by a call on ``line`` of ``source`` (a
    session ``depth`` sub-agents deep, nested in ``seen``), is left unread, said in a warning:
    it is one of ``seen`` (a circle), or deeper than sub-agents nest."""
    what = f"sub-agent session {path.name}"
    if path.resolve() in seen:
        # Gemini CLI names a child's folder by its session's id, a new one for each run:
        # only a broken or hostile file (a ``sessionId`` of ``.`` or ``..``, a link) leads
        # back up.
        reason = f"{what} is already shown above it (sub-agents in a circle): not nested again"
        source.warn(reason, line)
        return True
    if depth >= MAX_DEPTH:
        instead = f"it loads on its own: turnfold.load({str(path)!r})"
        source.warn(too_deep(what, depth + 1, instead), line)
        return True
    return False


def _load_child(
    source: Source, path: Path, *, depth: int, seen: frozenset[Path], line: int | None
) -> Transcript | None:
    """The child session at ``path`` read one level deeper than ``depth``; None when it cannot
    be read, said in a warning on ``line``. Read by recursion, some six frames a level: the
    bound of :data:`~turnfold.nesting.MAX_DEPTH` levels keeps a chain within Python's stack."""
    try:
        child_source, stream = open_source(path)
    except OSError as exc:
        source.warn(f"sub-agent session {path.name}: {exc}", line)
        return None
    try:
        child = _read(child_source, depth=depth + 1, seen=seen | {path.resolve()})
    except TranscriptFormatError as exc:
        source.warn(f"sub-agent session {path.name}: {exc.reason}", line)
        return None
    finally:
        if stream is not None:
            stream.close()
    join_warnings(child.warnings, child_source.warnings, before=True)
    child.accounting = child_source.accounting
    # The child's records are the session's too: counted under their own types (issue 11).
    source.accounting.merge(child_source.accounting)
    return child
