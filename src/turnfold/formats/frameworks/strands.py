"""Strands Agents runs (spec A-1, A-2, issue 22), which are Bedrock Converse messages.

A Strands agent keeps its conversation in ``agent.messages``: a plain list of dicts in the
Bedrock Converse message format, ``{"role", "content": [blocks], "metadata"?}``, each block a
dict with one key (``text``, ``toolUse``, ``toolResult``, ``reasoningContent``, ``image``,
``document``, ``cachePoint``…) and no ``type``. The same reader therefore reads what boto3 users
save of Bedrock's Converse API.

Input shapes:

- a list of Converse messages (``json.dumps(agent.messages)``, the format's saved form), as a
  JSON document or one message a line;
- a Converse request ``{"messages": [...], "system": [{"text"}], "modelId"?}`` (the system
  prompt to ``metadata["system"]``, the model to ``metadata["model"]``);
- a Converse response ``{"output": {"message": ...}, "usage", "stopReason", "metrics"}``;
- a Strands session's stored messages (``SessionMessage.to_dict()``, the
  ``message_<n>.json`` files of ``FileSessionManager``: ``{"message", "message_id",
  "created_at", "redact_message"?}``), one file, a list or JSON lines;
- Strands objects, by their type: an ``Agent`` (:func:`plain` makes it a Converse request of
  its messages, ``model.config["model_id"]`` and system prompt, plus its name, the tools made
  with ``as_tool()`` and how many messages its conversation manager removed); ``SessionMessage``
  objects (``session_manager.list_messages(...)``); and an ``AgentResult``, which holds only the
  run's last message and its metrics: it reads as that message, a notice that the calls are not
  in it, and the per-tool call counts of its metrics in ``metadata["tool_metrics"]``.

Detection goes by the content blocks: Converse's have no ``type`` (one key each: ``text``,
``toolUse``, ``toolResult``, ``reasoningContent``…), where Anthropic's, Chat Completions' and
Responses' blocks always carry one, so a message whose blocks are all untyped Converse blocks
is marked, even one of ``{"text"}`` blocks alone; also by Strands' camelCase
``metadata.usage``, and by an untyped ``system`` list or ``modelId`` of a request. A message
whose content is a string is any API's plain message and carries no mark.

Mapping:

- a user message's ``text`` (and ``guardContent`` text) is a :class:`UserMessage`; images are
  its ``images``; ``document``, ``video`` and ``audio`` blocks are attachment lines in its text;
  a message holding only ``toolResult`` blocks is the agent loop reporting results;
- an assistant message's blocks become entries in order: ``text`` and ``citationsContent`` →
  :class:`AssistantText`; ``reasoningContent.reasoningText`` → :class:`Thinking` (text; a
  signature alone is ``encrypted``), ``redactedContent`` → ``redacted``; ``toolUse`` →
  :class:`ToolCall` (``toolUseId`` kept verbatim, ``input`` as its args). The calls of one
  message form one batch, ``msg-<position>``;
- ``toolResult`` settles the call with its ``toolUseId``: ``status`` ``"success"`` →
  ``success``, ``"error"`` → ``error`` (the framework's own error signal; a failing tool's
  exception text is the result), anything else ``unknown``. ``text`` content is the result
  text, ``json`` content is shown as JSON and kept in ``structured``, images are images;
- ``metadata.usage`` (inputTokens, outputTokens, cacheReadInputTokens, cacheWriteInputTokens)
  → the :class:`Usage` of the message's last text (else ``usage`` of its first thinking or call);
  ``metadata.metrics.latencyMs`` → ``meta["latency_ms"]`` of that entry; a response's
  ``stopReason`` ``max_tokens`` → a warning notice, ``guardrail_intervened`` /
  ``content_filtered`` → an :class:`AssistantError`;
- ``cachePoint`` blocks are prompt-cache markers and show nothing; ``tracking_id`` (Strands'
  random id per message) is not kept;
- structured output (``structured_output_model=``): Strands gives the model a tool named as
  the output's model class, whose input is the output; when it validates, its result is
  Strands' fixed ``Successfully validated <name> structured output`` and the run ends. That
  result makes the call's input the turn's answer (an :class:`AssistantText` of it as JSON,
  ``meta["structured_output"]``, by :func:`~turnfold.formats.common.structured_answer`, as other
  frameworks' structured output is shown); an ``AgentResult``'s ``structured_output`` (the
  validated object, defaults filled in) is the answer of a loaded ``AgentResult``. A model that
  writes the JSON itself (native structured output) states it in its text, which is the answer.
  Neither the messages nor a session's files hold the output otherwise.

An agent used as a tool (``Agent.as_tool()``, an ``Agent`` given in ``tools=``, or a ``@tool``
function that calls an agent it refers to, the agents-as-tools pattern) runs its own
conversation: the parent's messages hold only its call and its answer, so a call of such a tool
is a :class:`SubAgent`, known only when the ``Agent`` itself is loaded (a bare message list does
not say which tools are agents). The child agent keeps its last run (``as_tool()`` resets it
before each call; an agent a function calls keeps adding to its messages): its messages from
its last prompt on become the transcript of the tool's last call when their last text is that
call's result; every other call of it, and a function that makes its agent inside (whose name
only its code knows), has ``steps_missing``. Agents used as tools by agents used as tools nest
so, down to :data:`~turnfold.nesting.MAX_DEPTH` levels; the run of one deeper is not shown, and
a warning of the loaded transcript names it and its call. An agent that is a tool of itself, or
of an agent it runs under, is not followed into itself: Strands refuses to run an agent while it
runs (``ConcurrencyException``), so that call ran nothing. Swarm and Graph runs keep each node's
messages in that node's agent; nothing of them is in the messages read here.

A run stopped by interrupts (``stop_reason`` ``"interrupt"``: a hook's
``event.interrupt(...)``, or a tool's) holds its last calls without results: the agent's
interrupt state (as Strands' session stores it) has the results of the calls that ran, which
settle them, and its interrupts, each a :class:`PendingAction` ``question`` (``name: reason``)
whose call waits ``confirming``; an ``AgentResult`` lists its interrupts alike.

The messages record no timestamps and no durations, so none is shown (L-3); only a session's
stored messages have one, ``created_at`` (when the message was stored), which becomes the
``timestamp`` of that message's entries. An agent's conversation manager drops the oldest
messages of a long run (the default sliding window keeps 40): ``load(agent)`` then begins with
a warning notice counting them (``removed_message_count``), since they are gone.

Live (A-2): ``agent.stream_async(prompt)`` yields untyped dicts. ``data`` grows the text
being written, ``reasoningText`` the reasoning, ``current_tool_use`` shows the call being
written (``executing``, its input the growing JSON string until its block ends); the raw
model chunks (``event``) mark where blocks end; each complete ``message`` (the assistant's, then
the user's tool results) settles those entries in place, so nothing is duplicated. The prompt
is not an event of the stream: it is read from ``agent.messages`` of the first event that
carries the ``agent`` (the model's text, reasoning and tool-input events do; the loop's first
events and the messages are plain dicts, and ``result`` holds the ``AgentResult``). An agent used
as a tool (``as_tool()``, an ``Agent`` in ``tools=``, a ``@tool`` async generator yielding an
agent's events) streams its own run's events inside the parent's (``tool_stream``): they are
followed into the transcript of its call's :class:`SubAgent`, which grows while the call runs,
so every call keeps its own run where a load has only the last. An agent a plain ``@tool``
function calls streams nothing: when the stream ends its last run is nested as a load nests
it. ``force_stop`` is an :class:`AssistantError`. What a sliding window later drops from
``agent.messages`` stays in the followed transcript. A ``tool_interrupt_event`` makes its
call wait (``confirming``) with a pending action per interrupt, and the closing ``result``
adds any other interrupt; when the stream ends, the calls that ran before the run stopped
are settled from the agent's interrupt state and the calls still open are ``unknown``, as a
load of the agent shows them. A run resumed with the answers (``stream_async(responses)``)
first stores the results of the calls it stopped at, before any event carries the agent: that
message waits for the agent, whose messages before it (the stopped run's) are read first. An
event of a kind not shown is said in a warning, once.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from turnfold import codec
from turnfold.formats.anthropic import role_of
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MessageBuilder,
    NameSet,
    as_int,
    checked_timestamp,
    describe_args,
    parse_arguments,
    plain_output,
    stringify,
    structured_answer,
    text_result,
    usage_from,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source, plain_each, plain_value, type_of_record, warning_count
from turnfold.formats.wording import failure, notice
from turnfold.formats.wrappers import listed_evidence, sample
from turnfold.model import (
    AssistantText,
    Entry,
    ImageData,
    SubAgent,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.usage import attach_usage, counts_of

NAME = "strands"

#: The keys of a Converse content block (one of them per block, no ``type``).
BLOCK_KEYS = NameSet(
    {"text", "toolUse", "toolResult", "reasoningContent", "image", "document", "video",
     "audio", "cachePoint", "guardContent", "citationsContent", "interruptResponse"}
)  # fmt: skip
#: Block keys no other format writes.
_MARK_KEYS = NameSet(
    {"toolUse", "toolResult", "reasoningContent", "cachePoint", "guardContent",
     "citationsContent", "interruptResponse"}
)  # fmt: skip
#: Converse's media blocks: an image is shown where its bytes are at hand, any of them named by
#: a line otherwise (:func:`attachment_line`).
MEDIA_KEYS = NameSet({"image", "document", "video", "audio"})
_ROLES = NameSet({"user", "assistant"})
#: The document key of :func:`plain`'s agent description.
AGENT_KEY = "strands_agent"
#: The document key of :func:`plain`'s ``AgentResult``.
RESULT_KEY = "strands_result"

#: Converse request/response keys that hold settings, not steps of the conversation.
_SETTINGS = (
    "inferenceConfig", "toolConfig", "guardrailConfig", "additionalModelRequestFields",
    "additionalModelResponseFieldPaths", "additionalModelResponseFields", "promptVariables",
    "requestMetadata", "performanceConfig", "ResponseMetadata", "trace", "serviceTier",
)  # fmt: skip


# --- Converse content (the strands loader's, and the otlp reader's of Strands' traces) --------

#: The result of Strands' structured output tool (a tool named as the
#: ``structured_output_model``, ``tools/structured_output/structured_output_tool.py``) when the
#: model's input to it validated: the loop then stops, and that input is the run's structured
#: output, which neither the messages nor a session record elsewhere (only the
#: ``AgentResult``'s ``structured_output`` holds it as an object).
_VALIDATED = "Successfully validated {} structured output"

#: What Strands' tracer writes for bytes, which JSON cannot hold (strands/telemetry/tracer.py,
#: ``JSONEncoder._process_value``): bytes that are not in the trace.
_REPLACED = "<replaced>"


def _base64(value: Any) -> str | None:
    """Bytes as base64 text: raw bytes (a live message), Strands' session encoding
    ``{"__bytes_encoded__": true, "data"}``, or a string already base64 (boto3's JSON); None
    for what Strands' tracer writes in their place."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping) and value.get("__bytes_encoded__"):
        data = value.get("data")
        return data if isinstance(data, str) else None
    return value if isinstance(value, str) and value and value != _REPLACED else None


def _size(value: Any) -> int | None:
    """How many bytes raw or base64-encoded data holds."""
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    data = _base64(value)
    return len(data) * 3 // 4 - len(data) + len(data.rstrip("=")) if data is not None else None


_IMAGE_TYPES = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
                "gif": "image/gif", "webp": "image/webp"}  # fmt: skip


def image_of(image: Any) -> ImageData | None:
    """A Converse ``image`` (``{"format", "source": {"bytes"}}``) as :class:`ImageData`."""
    if not isinstance(image, Mapping):
        return None
    source = image.get("source")
    data = _base64(source.get("bytes")) if isinstance(source, Mapping) else None
    if data is None:
        return None
    kind = image.get("format")
    media_type = _IMAGE_TYPES.get(kind, f"image/{kind}") if isinstance(kind, str) else "image"
    return ImageData(media_type=media_type, data=data)


def attachment_line(key: str, value: Any) -> str:
    """A ``document``, ``video``, ``audio`` (or image by location) block as one line."""
    value = value if isinstance(value, Mapping) else {}
    parts = [key]
    name = value.get("name")
    if isinstance(name, str) and name:
        parts.append(name)
    kind = value.get("format")
    if isinstance(kind, str) and kind:
        parts.append(kind)
    source = value.get("source")
    if isinstance(source, Mapping):
        location = source.get("s3Location") or source.get("location")
        uri = location.get("uri") if isinstance(location, Mapping) else None
        if isinstance(uri, str):
            parts.append(uri)
        size = _size(source.get("bytes"))
        if size is not None:
            parts.append(f"{size} B")
    return f"[attachment: {' · '.join(parts)}]"


def key_of(block: Any) -> str | None:
    """The block's Converse key (``json`` too, for tool result content)."""
    if not isinstance(block, Mapping):
        return None
    return next((k for k in block if k in BLOCK_KEYS or k == "json"), None)


def guard_text(value: Any) -> str:
    """The text of a ``guardContent`` block (``{"text": {"text"}}``)."""
    text = value.get("text") if isinstance(value, Mapping) else None
    text = text.get("text") if isinstance(text, Mapping) else text
    return text if isinstance(text, str) else ""


def citations_text(value: Any) -> str:
    """The text of a ``citationsContent`` block (``{"content": [{"text"}]}``)."""
    content = value.get("content") if isinstance(value, Mapping) else None
    blocks = content if isinstance(content, list) else []
    texts = [c.get("text") for c in blocks if isinstance(c, Mapping)]
    return "".join(t for t in texts if isinstance(t, str))


def tool_result_content(
    content: Any, unknown: Callable[[Any], str | None]
) -> tuple[str | None, list[ImageData], Any]:
    """A ``toolResult``'s content as its text (texts one a line, ``json`` as JSON, media
    named by a line), its images and its structured value (the first ``json``); a block of no
    such kind is the line ``unknown`` makes of it, or left out when that gives None.

    >>> tool_result_content([{"text": "3"}, {"json": {"sum": 3}}], str)
    ('3\\n{\\n  "sum": 3\\n}', [], {'sum': 3})
    """
    texts: list[str] = []
    images: list[ImageData] = []
    structured: Any = None
    for part in content if isinstance(content, list) else []:
        key = key_of(part)
        value = part.get(key) if isinstance(part, Mapping) and key else None
        if key == "text" and isinstance(value, str):
            texts.append(value)
        elif key == "json":
            structured = value if structured is None else structured
            texts.append(stringify(value))
        elif key == "image" and (image := image_of(value)) is not None:
            images.append(image)
        elif key in MEDIA_KEYS:
            texts.append(attachment_line(str(key), value))
        elif (line := unknown(part)) is not None:
            texts.append(line)
    return ("\n".join(texts) if texts else None), images, structured


# --- detection --------------------------------------------------------------------------------


def _block_verdict(block: Any) -> int:
    """NOT_MINE, READABLE, or DISTINCTIVE for one content block."""
    if not isinstance(block, Mapping) or "type" in block:
        return NOT_MINE
    keys = [k for k in block if k in BLOCK_KEYS]
    if not keys:
        return NOT_MINE
    for key in keys:
        if key in _MARK_KEYS:
            return DISTINCTIVE
        value = block[key]
        if key in MEDIA_KEYS and isinstance(value, Mapping) and "format" in value:
            return DISTINCTIVE
    return READABLE


def _classify(message: Any) -> int:
    """A Converse message: a role, a content list of untyped blocks; marked when a block is
    Converse's own or its ``metadata.usage`` is Strands' camelCase."""
    if is_session_message(message):
        return DISTINCTIVE if _classify(message["message"]) else NOT_MINE
    if not isinstance(message, Mapping) or message.get("role") not in _ROLES:
        return NOT_MINE
    content = message.get("content")
    if not isinstance(content, list):
        return NOT_MINE  # a string content is any API's plain message
    verdict = READABLE
    for block in content:
        seen = _block_verdict(block)
        if seen == NOT_MINE:
            return NOT_MINE
        verdict = max(verdict, seen)
    if content:
        # Every block here is untyped: Anthropic, Chat Completions and Responses content
        # blocks all carry a ``type`` (their APIs refuse one without), so even ``{"text"}``
        # blocks alone are Converse's mark.
        verdict = DISTINCTIVE
    usage = message.get("metadata")
    usage = usage.get("usage") if isinstance(usage, Mapping) else None
    if isinstance(usage, Mapping) and ("inputTokens" in usage or "outputTokens" in usage):
        verdict = DISTINCTIVE
    return verdict


def _untyped_system(system: Any) -> bool:
    return (
        isinstance(system, list)
        and bool(system)
        and all(isinstance(b, Mapping) and "type" not in b for b in system)
    )


_LACKS = "no toolUse, toolResult or reasoningContent block"


def detect(source: Source) -> Evidence:
    """A Converse message list, request or response (or a Strands object's records)."""
    listed = listed_evidence(source, _classify, _LACKS)
    if listed is not None:
        return listed
    document = source.document
    if not isinstance(document, Mapping):
        return Evidence.none("no Converse message")
    output = document.get("output")
    if isinstance(output, Mapping) and "message" in output:
        verdict = _classify(output.get("message"))
        if verdict == NOT_MINE:
            return Evidence.none("output.message is no Converse message")
        return Evidence(share=1.0, marks=1 + (verdict == DISTINCTIVE))
    if is_session_message(document):
        return Evidence.of([document], _classify, _LACKS)
    if isinstance(document.get(RESULT_KEY), Mapping):
        return Evidence(share=1.0, marks=2)
    messages = document.get("messages")
    if not isinstance(messages, list):
        return Evidence.none("no messages or output.message")
    evidence = Evidence.of(sample(messages), _classify, _LACKS)
    marks = evidence.marks
    # An untyped system list is Converse's alone (Anthropic types its system blocks), and
    # counts for two, as Anthropic counts any system list with a text for one.
    marks += 2 if _untyped_system(document.get("system")) else 0
    marks += 1 if isinstance(document.get("modelId"), str) else 0
    marks += 2 if isinstance(document.get(AGENT_KEY), Mapping) else 0
    if not evidence.fits or not marks:
        return evidence
    return Evidence(share=evidence.share, marks=marks)


# --- the builder ------------------------------------------------------------------------------


def converse_usage(raw: Any) -> Usage | None:
    """Converse ``usage`` as :class:`Usage`; the cache writes kept for an hour, which cost
    more, from its ``cacheDetails`` (``[{"ttl": "1h", "inputTokens": n}, …]``)."""
    usage = usage_from(
        raw,
        cache_apart=True,
        input_tokens="inputTokens",
        output_tokens="outputTokens",
        cache_read_tokens="cacheReadInputTokens",
        cache_write_tokens="cacheWriteInputTokens",
    )
    if usage is not None and isinstance(details := raw.get("cacheDetails"), list):
        hour = sum(
            as_int(d.get("inputTokens")) or 0
            for d in details
            if isinstance(d, Mapping) and d.get("ttl") == "1h"
        )
        if 0 < hour <= (usage.cache_write_tokens or 0):
            usage.cache_write_1h_tokens = hour
    return usage


def _status(value: Any) -> ToolStatus:
    return "success" if value == "success" else "error" if value == "error" else "unknown"


def _system_text(system: Any) -> str | None:
    if isinstance(system, str):
        return system or None
    if isinstance(system, list):
        texts = [b.get("text") for b in system if isinstance(b, Mapping)]
        return "\n\n".join(t for t in texts if isinstance(t, str) and t) or None
    return None


class ConverseBuilder(MessageBuilder):
    """Builds a transcript from Converse messages fed one at a time (static or live).

    ``agent_tools`` maps the name of a tool that is an agent (``Agent.as_tool()``, an
    ``Agent`` given as a tool, a ``@tool`` function calling one) to that agent's name (None
    when only the function's code names it): its calls are sub-agents whose steps the
    messages do not hold.
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<messages>",
        *,
        live: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, live=live)
        self.agent_tools: dict[str, str | None] = {}
        #: The last run of each agent tool, by tool name (:func:`agent_description`).
        self.agent_runs: dict[str, Mapping[str, Any]] = {}
        self.recognized = 0
        #: The interrupts shown, by id.
        self.interrupts: set[str] = set()

    # --- feeding ------------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        self.feed_message(message, line)

    def feed_message(
        self,
        message: Any,
        line: int,
        *,
        reuse: list[Entry] | None = None,
        usage: Any = None,
    ) -> list[Entry]:
        """Add one message; its entries. ``reuse`` are entries a live view already shows for
        it (streamed text, reasoning, calls), updated in place instead of appended again;
        ``usage`` is a response's own usage, for a message without ``metadata``."""
        if not isinstance(message, Mapping):
            self.warn(
                message.reason if isinstance(message, MalformedLine) else "not a message object",
                line,
            )
            return []
        role = message.get("role")
        content = message.get("content")
        if role not in _ROLES or not isinstance(content, list):
            self.warn(f"not a Converse message (role {role!r})", line)
            return []
        self.recognized += 1
        if role == "user":
            return self._user(content, line)
        return self._assistant(message, content, line, reuse or [], usage)

    def _user(self, content: list[Any], line: int) -> list[Entry]:
        texts: list[str] = []
        images: list[ImageData] = []
        answer: AssistantText | None = None
        for block in content:
            key = key_of(block)
            value = block.get(key) if isinstance(block, Mapping) and key else None
            if key == "toolResult":
                answer = self._settle(value, line) or answer
            elif key == "text" and isinstance(value, str):
                texts.append(value)
            elif key == "guardContent":
                texts.append(guard_text(value))
            elif key == "image" and (image := image_of(value)) is not None:
                images.append(image)
            elif key in MEDIA_KEYS:
                texts.append(attachment_line(str(key), value))
            elif key == "interruptResponse":
                texts.append(f"[interrupt response: {stringify(value)}]")
            elif key != "cachePoint":
                self._unknown(block, line)
        text = "\n\n".join(t for t in texts if t)
        # A structured output answer a result made is this message's (a session stamps it).
        shown: list[Entry] = [answer] if answer is not None else []
        if not text and not images:
            return shown
        return [self.transcript.append(UserMessage(text=text, images=images)), *shown]

    def _assistant(
        self,
        message: Mapping[str, Any],
        content: list[Any],
        line: int,
        reuse: list[Entry],
        usage: Any,
    ) -> list[Entry]:
        batch_id = f"msg-{line}"
        entries: list[Entry] = []
        for block in content:
            entry = self._assistant_entry(block, batch_id, line)
            if entry is not None:
                entries.append(self._place(entry, reuse))
        for left in reuse:  # streamed but not in the message: no longer being written
            if isinstance(left, Thinking) and left.streaming:
                self.transcript.update(left, streaming=False)
        metadata = message.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        attach_usage(entries, converse_usage(metadata.get("usage", usage)), self.transcript)
        metrics = metadata.get("metrics")
        latency = metrics.get("latencyMs") if isinstance(metrics, Mapping) else None
        if entries and isinstance(latency, (int, float)) and not isinstance(latency, bool):
            first = entries[0]
            self.transcript.update(first, meta={**first.meta, "latency_ms": latency})
        return entries

    def _assistant_entry(self, block: Any, batch_id: str, line: int) -> Entry | None:
        key = key_of(block)
        value = block.get(key) if isinstance(block, Mapping) and key else None
        if key == "text":
            return AssistantText(text=value) if isinstance(value, str) and value else None
        if key == "reasoningContent":
            return thinking_of(value)
        if key == "toolUse" and isinstance(value, Mapping):
            return self._call(value, batch_id, line)
        if key == "citationsContent":
            text = citations_text(value)
            return AssistantText(text=text) if text else None
        if key == "guardContent":
            text = guard_text(value)
            return AssistantText(text=text) if text else None
        if key in MEDIA_KEYS:
            return AssistantText(text=attachment_line(str(key), value))
        if key != "cachePoint":
            self._unknown(block, line)
        return None

    def _call(self, tool_use: Mapping[str, Any], batch_id: str, line: int) -> ToolCall | None:
        call_id = tool_use.get("toolUseId")
        call_id = call_id if isinstance(call_id, str) else ""
        if not call_id:
            self.warn("toolUse block without a toolUseId", line)
        elif call_id in self._calls:
            self.warn(f"duplicate toolUseId {call_id!r} skipped", line)
            return None
        return self.new_call(call_id, tool_use.get("name"), tool_use.get("input"), batch_id)

    def new_call(self, call_id: str, name: Any, args: Any, batch_id: str | None) -> ToolCall:
        """A call as the format shows it (its sub-agent when its tool is an agent)."""
        name = name if isinstance(name, str) and name else "tool"
        args = parse_arguments(args)
        agent = name in self.agent_tools
        return ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args),
            status=self.open_status,
            batch_id=batch_id,
            subagent=SubAgent(name=self.agent_tools[name], steps_missing=True) if agent else None,
        )

    def _place(self, entry: Entry, reuse: list[Entry]) -> Entry:
        """``entry`` appended, or written over the streamed entry that showed it."""
        placed = entry
        if reuse and _same_block(reuse[0], entry):
            target = reuse.pop(0)
            changes = {f.name: getattr(entry, f.name) for f in dataclasses.fields(entry)}
            del changes["id"]
            placed = self.transcript.update(target, **changes)
        else:
            self.transcript.append(entry)
        if isinstance(placed, ToolCall) and placed.call_id:
            self._calls[placed.call_id] = placed
        return placed

    def _settle(self, result: Any, line: int) -> AssistantText | None:
        """The call ``result`` settles, settled; the structured output answer it makes."""
        call_id = result.get("toolUseId") if isinstance(result, Mapping) else None
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None or not isinstance(result, Mapping):
            self.warn(f"toolResult for an unknown toolUseId {call_id!r}", line)
            return None
        text, images, structured = tool_result_content(
            result.get("content"), lambda part: self._unknown(part, line)
        )
        self.transcript.update(  # the entry itself, updated in place
            call,
            status=_status(result.get("status")),
            result=text_result(text, images=images, structured=structured),
        )
        if call.status == "success" and text == _VALIDATED.format(call.name):
            # The run's structured output (``structured_output_model``): Strands ends the
            # run here, and its value (the call's input) is the answer, as other frameworks'.
            return structured_answer(self.transcript, call.args)
        return None

    # --- a run stopped by interrupts ---------------------------------------------------------

    def interrupted(self, interrupts: Any, results: Any = ()) -> None:
        """A run stopped for a human's answer (``stop_reason`` ``"interrupt"``): the results of
        the calls that ran before it stopped (``completed_tool_results`` of the agent's
        interrupt state, which ``agent.messages`` holds only once the run resumes) settle
        their calls; each interrupt not yet answered is a :class:`PendingAction`, and the call
        it stopped waits for it (``confirming``)."""
        for result in results if isinstance(results, list) else ():
            call_id = result.get("toolUseId") if isinstance(result, Mapping) else None
            call = self._calls.get(call_id) if isinstance(call_id, str) else None
            if call is not None and call.status in _OPEN:
                self._settle(result, 0)
        for interrupt in interrupts if isinstance(interrupts, list) else ():
            self.interrupt(interrupt)

    def interrupt(self, interrupt: Any, call: ToolCall | None = None) -> None:
        """One ``Interrupt`` (as ``Interrupt.to_dict()`` writes it): a pending action, once,
        unless it was answered; ``call`` is the call it stopped, when the event says it."""
        if not isinstance(interrupt, Mapping) or interrupt.get("response") is not None:
            return
        interrupt_id = interrupt.get("id")
        if not isinstance(interrupt_id, str) or interrupt_id in self.interrupts:
            return
        self.interrupts.add(interrupt_id)
        if call is None:
            # Strands calls the id opaque; the ids it makes for a tool's interrupts name the
            # tool use (``v1:before_tool_call:<toolUseId>:…`` in ``hooks/events.py``,
            # ``v1:tool_call:<toolUseId>:…`` in ``types/tools.py``): used only to point the
            # action at its call, which is otherwise left as it is.
            call = next(
                (c for c in self._calls.values()
                 if c.status in _OPEN and f":{c.call_id}:" in interrupt_id),
                None,
            )  # fmt: skip
        name = interrupt.get("name")
        name = name if isinstance(name, str) and name else "interrupt"
        reason = interrupt.get("reason")
        text = name
        if reason not in (None, ""):
            text += ": " + (reason if isinstance(reason, str) else codec.dumps(reason, default=str))
        meta = {"interrupt_id": interrupt_id, "name": name}
        if reason is not None:
            meta["reason"] = reason
        self.transcript.append(self.wait_on_user(call, "question", text, meta=meta))

    def _unknown(self, block: Any, line: int) -> None:
        key = key_of(block) if isinstance(block, Mapping) else None
        kind = key or (",".join(map(str, block)) if isinstance(block, Mapping) else None)
        kind = kind or type(block).__name__
        self.warn_once(f"unknown content block {kind!r} skipped", line)  # not once per block


#: Keys of ``stream_async`` events (``types/_events.py``) that add nothing the messages do not
#: hold: the loop's start markers; a throttled loop's wait; a citation, a reasoning signature
#: or any other model delta (``delta``; its message settles the block); a cancelled call
#: (``tool_cancel_event``: its toolResult comes in the next message); the structured output
#: (the output tool's call and result are in the messages, and its validated result makes
#: the answer of the call's input, as a load does).
_QUIET_EVENTS = NameSet(
    {"init_event_loop", "start", "start_event_loop", "event_loop_throttled_delay", "delta",
     "citation", "reasoning_signature", "tool_cancel_event", "structured_output"}
)  # fmt: skip
#: The statuses of a call without its result yet, static or live.
_OPEN = NameSet({"unknown", "pending", "executing"})


def _is_results(message: Any) -> bool:
    """A user message of tool results alone (the agent loop reporting them)."""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    content = message.get("content")
    return isinstance(content, list) and bool(content) and not _is_prompt(message)


def _is_prompt(message: Any) -> bool:
    """A user message with something besides tool results (a prompt, not the loop's report)."""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    content = message.get("content")
    return isinstance(content, list) and any(key_of(b) != "toolResult" for b in content)


def _same_block(shown: Entry, entry: Entry) -> bool:
    if type(shown) is not type(entry):
        return False
    if isinstance(shown, ToolCall) and isinstance(entry, ToolCall):
        return shown.call_id == entry.call_id
    return True


def thinking_of(value: Any) -> Thinking | None:
    """A ``reasoningContent`` block: its text, a signature alone (encrypted), or redacted."""
    if not isinstance(value, Mapping):
        return None
    reasoning = value.get("reasoningText")
    if isinstance(reasoning, Mapping):
        text = reasoning.get("text")
        if isinstance(text, str) and text.strip():
            return Thinking(text=text)
        signature = reasoning.get("signature")
        if isinstance(signature, str) and signature:
            return Thinking(form="encrypted", data=signature)
    if "redactedContent" in value:
        return Thinking(form="redacted", data=_base64(value.get("redactedContent")))
    return None


# --- Strands objects (spec A-1) ---------------------------------------------------------------


def _encoded(value: Any) -> Any:
    """Strands' own session encoding of messages (bytes as base64): new containers, the
    caller's messages untouched."""
    from strands.types.session import encode_bytes_values

    return encode_bytes_values(value)


def agent_description(
    agent: Any, depth: int = 0, within: frozenset[int] = frozenset()
) -> dict[str, Any]:
    """What a transcript shows of the agent itself: its name, model, system prompt, the
    tools that are agents (``as_tool()``, an ``Agent`` given as a tool, a ``@tool`` function
    calling one), tool name → agent name, and in ``agent_runs`` what each such agent holds of
    its last run (its messages from its last prompt on, and its own description).

    ``depth`` is the agent's level (the one loaded is 0), ``within`` the agents it runs under,
    by identity (:func:`_last_run`)."""
    out: dict[str, Any] = {}
    above = within | {id(agent)}
    name = getattr(agent, "name", None)
    if isinstance(name, str) and name:
        out["name"] = name
    model = getattr(agent, "model", None)
    config = getattr(model, "config", None)
    model_id = config.get("model_id") if isinstance(config, Mapping) else None
    if isinstance(model_id, str) and model_id:
        out["model_id"] = model_id
    registry = getattr(getattr(agent, "tool_registry", None), "registry", None)
    agents: dict[str, str | None] = {}
    runs: dict[str, Any] = {}
    for tool_name, tool in registry.items() if isinstance(registry, Mapping) else ():
        if not isinstance(tool_name, str):
            continue
        child: Any = None
        if getattr(tool, "tool_type", None) == "agent":  # as_tool(), or an Agent in tools=
            child = getattr(tool, "agent", None)
            child_name = getattr(child, "name", None)
            if not isinstance(child_name, str):
                continue
            agents[tool_name] = child_name
        else:
            wrapped = _wrapped_agent(getattr(tool, "__wrapped__", None))
            if wrapped is None:
                continue
            child_name, child = wrapped
            agents[tool_name] = child_name
        run = _last_run(child, depth, above) if child is not None else None
        if run is not None:
            runs[tool_name] = run
    if agents:
        out["agent_tools"] = agents
    if runs:
        out["agent_runs"] = runs
    manager = getattr(agent, "conversation_manager", None)
    removed = as_int(getattr(manager, "removed_message_count", None))
    if removed:
        out["removed_messages"] = removed
        out["conversation_manager"] = type(manager).__name__
    stopped = _interrupt_state(agent)
    if stopped is not None:
        out["interrupt_state"] = stopped
    return out


def _interrupt_state(agent: Any) -> dict[str, Any] | None:
    """An agent stopped by interrupts: its interrupts and the results of the calls that ran
    before it stopped, from its interrupt state as Strands' own session stores it
    (``_InterruptState.to_dict()``, ``types/session.py``); None while it is not stopped."""
    state = getattr(agent, "_interrupt_state", None)
    if state is None or getattr(state, "activated", False) is not True:
        return None
    try:
        saved = state.to_dict()
    except Exception:  # a state Strands cannot serialize itself: the messages still read
        return None
    interrupts = saved.get("interrupts") if isinstance(saved, Mapping) else None
    pending = saved.get("pending_tool_execution") if isinstance(saved, Mapping) else None
    results = pending.get("completed_tool_results") if isinstance(pending, Mapping) else None
    return {
        "interrupts": plain_value(list(interrupts.values()))
        if isinstance(interrupts, Mapping)
        else [],
        "completed_tool_results": _encoded(list(results)) if isinstance(results, list) else [],
    }


def _is_agent(value: Any) -> bool:
    return (
        type(value).__module__.startswith("strands")
        and hasattr(value, "tool_registry")
        and hasattr(value, "messages")
    )


def _wrapped_agent(function: Any) -> tuple[str | None, Any] | None:
    """The agents-as-tools pattern: a ``@tool`` function that calls an ``Agent``. The agent
    it refers to (a global or a closure's) gives its name and the agent; a function that
    refers to the ``Agent`` class makes one itself, whose name only its code knows
    (``(None, None)``). None for a function that refers to no agent: a plain tool."""
    import inspect

    if not inspect.isfunction(function):
        return None
    try:
        found = inspect.getclosurevars(function)
    except (TypeError, ValueError):  # a function whose closure cannot be read
        return None
    named = [*found.nonlocals.values(), *found.globals.values()]
    for value in named:
        if _is_agent(value):
            name = getattr(value, "name", None)
            return (name if isinstance(name, str) else None), value
    for value in named:
        if (
            isinstance(value, type)
            and value.__module__.startswith("strands")
            and hasattr(value, "as_tool")
        ):
            return None, None
    return None


#: The key of a run in ``agent_runs`` that nests deeper than sub-agents nest
#: (:data:`~turnfold.nesting.MAX_DEPTH`): its messages, to tell which call it is, and no
#: description of its own tools.
_PAST_BOUND = "past_bound"


def _last_run(agent: Any, depth: int, within: frozenset[int]) -> dict[str, Any] | None:
    """What an agent used as a tool, by an agent at level ``depth`` that runs under the
    agents ``within`` (itself among them), holds of its last run: ``as_tool()`` resets its
    messages before each call and an agent called by a function keeps adding to them, so the
    messages from the last prompt on are its last call's steps (the reader checks they end
    with that call's result before showing them).

    A run at a level past :data:`~turnfold.nesting.MAX_DEPTH` is marked :data:`_PAST_BOUND`,
    without the agent's own tools: the reader names it in a warning rather than nesting it.
    None for an agent among ``within``: Strands refuses to run an agent while it runs
    (``ConcurrencyException``, the call's result), so its messages are a run shown above,
    and following it would go round for ever."""
    messages = getattr(agent, "messages", None)
    if not isinstance(messages, list) or id(agent) in within:
        return None
    start = max((i for i, m in enumerate(messages) if _is_prompt(m)), default=-1)
    if start < 0:
        return None
    run: dict[str, Any] = {"messages": _encoded(messages[start:])}
    if depth >= MAX_DEPTH:
        run[_PAST_BOUND] = True
    else:
        run["agent"] = agent_description(agent, depth + 1, within)
    return run


def _result_record(result: Any) -> dict[str, Any]:
    """An ``AgentResult``: its last message, stop reason and the metrics' per-tool counts."""
    metrics = getattr(result, "metrics", None)
    tools: dict[str, dict[str, int]] = {}
    tool_metrics = getattr(metrics, "tool_metrics", None)
    for name, counts in tool_metrics.items() if isinstance(tool_metrics, Mapping) else ():
        tools[str(name)] = {
            key: value
            for key in ("call_count", "success_count", "error_count")
            if (value := as_int(getattr(counts, key, None))) is not None
        }
    usage = getattr(metrics, "accumulated_usage", None)
    interrupts = getattr(result, "interrupts", None)
    return {
        "message": _encoded(getattr(result, "message", None)),
        "stop_reason": getattr(result, "stop_reason", None),
        "tool_metrics": tools,
        "accumulated_usage": dict(usage) if isinstance(usage, Mapping) else None,
        "interrupts": [_interrupt(i) for i in interrupts] if interrupts else [],
        "structured_output": plain_output(getattr(result, "structured_output", None)),
    }


def _interrupt(interrupt: Any) -> Any:
    """An ``Interrupt`` as Strands serializes it (``Interrupt.to_dict()``)."""
    to_dict = getattr(interrupt, "to_dict", None)
    return plain_value(to_dict() if callable(to_dict) else interrupt)


def plain(value: Any) -> Any:
    """An ``Agent`` as a Converse request (its messages, model and system prompt) with its
    description; an ``AgentResult`` as its last message and metrics; a list as its items."""
    if isinstance(value, (list, tuple)):
        return plain_each(value, plain)
    messages = getattr(value, "messages", None)
    if isinstance(messages, list) and hasattr(value, "tool_registry"):
        description = agent_description(value)
        out: dict[str, Any] = {"messages": _encoded(messages)}
        if "model_id" in description:
            out["modelId"] = description["model_id"]
        system = getattr(value, "system_prompt", None)
        if isinstance(system, str) and system:
            out["system"] = [{"text": system}]
        out[AGENT_KEY] = description
        return out
    if hasattr(value, "stop_reason") and hasattr(value, "message") and hasattr(value, "metrics"):
        return {RESULT_KEY: _result_record(value)}
    to_dict = getattr(value, "to_dict", None)
    if type(value).__name__ == "SessionMessage" and callable(to_dict):
        return to_dict()  # Strands' own serialization, as its session files hold it
    if isinstance(value, Mapping):
        return _encoded(dict(value))
    return {"(object)": type(value).__qualname__}


# --- reading ----------------------------------------------------------------------------------


def read(source: Source) -> Transcript:
    """The Converse messages of ``source``, each accounted for by its role."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = ConverseBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    if isinstance(document, Mapping) and not is_session_message(document):
        _read_document(source, builder, document)
    else:
        for line, record in source.records():
            if isinstance(record, MalformedLine):
                builder.warn(record.reason, line)
                source.note(type_of_record(record), "warned")
            elif is_session_message(record):
                _session_message(source, builder, record, line)
            else:
                builder.feed_noted(source, record, line, role_of(record))
    attach_agent_runs(builder)
    if builder.recognized == 0:
        kind = document.get("(object)") if isinstance(document, Mapping) else None
        reason = (
            f"a Strands {kind} holds no messages: load an Agent (a Swarm's or Graph's "
            "node agents each), or its agent.messages"
            if isinstance(kind, str)
            else "no Converse message (role, content list of blocks)"
        )
        raise TranscriptFormatError(source.name, [NAME], None, reason)
    return transcript


def is_session_message(record: Any) -> bool:
    """A ``SessionMessage.to_dict()`` record of a Strands session (``message_<n>.json``)."""
    return (
        isinstance(record, Mapping)
        and isinstance(record.get("message"), Mapping)
        and as_int(record.get("message_id")) is not None
    )


def _session_message(
    source: Source, builder: ConverseBuilder, record: Mapping[str, Any], line: int
) -> None:
    """A stored message: the redacted content when it was redacted (as
    ``SessionMessage.to_message`` reads it), its entries stamped with ``created_at``."""
    message = record.get("redact_message") or record.get("message")
    warned = warning_count(builder.transcript.warnings)
    entries = builder.feed_message(message, line)
    what = f"message {record.get('message_id')}"
    timestamp = warned_timestamp(record.get("created_at"), checked_timestamp,
                                 lambda reason: builder.warn(reason, line), what,
                                 name="created_at")  # fmt: skip
    if timestamp is not None:
        for entry in entries:
            builder.transcript.update(entry, timestamp=timestamp)
    warned_now = warning_count(builder.transcript.warnings) > warned
    source.note("session_message", "warned" if warned_now else "mapped")


def apply_agent(builder: ConverseBuilder, description: Mapping[str, Any]) -> None:
    """An agent's description (:func:`agent_description`) into the transcript."""
    metadata = builder.transcript.metadata
    if isinstance(description.get("name"), str):
        metadata["agent"] = description["name"]
    if isinstance(description.get("model_id"), str):
        metadata["model"] = description["model_id"]
    tools = description.get("agent_tools")
    if isinstance(tools, Mapping):
        builder.agent_tools.update(
            {
                k: v
                for k, v in tools.items()
                if isinstance(k, str) and (v is None or isinstance(v, str))
            }
        )
    runs = description.get("agent_runs")
    if isinstance(runs, Mapping):
        builder.agent_runs.update(
            {k: v for k, v in runs.items() if isinstance(k, str) and isinstance(v, Mapping)}
        )


def attach_agent_runs(
    builder: ConverseBuilder, level: int = 0, top: ConverseBuilder | None = None
) -> None:
    """Each agent tool's last run as the transcript of its last call (spec A-1, L-1): the
    agent's messages from its last prompt on, shown only when their last text is that call's
    result, so an agent used elsewhere since is never taken for this call (L-3). Earlier
    calls of the tool keep ``steps_missing``: the agent holds only its last run.

    ``level`` is the level of ``builder``'s transcript, ``top`` the builder of the loaded one
    (level 0): a run past :data:`~turnfold.nesting.MAX_DEPTH` is said in its warnings
    (F-7, X-2), and its call shows its line and result."""
    top = builder if top is None else top
    for tool_name, run in builder.agent_runs.items():
        call = next(
            (c for c in reversed(builder.transcript.tool_calls()) if c.name == tool_name), None
        )
        if call is None or call.subagent is None or call.subagent.transcript is not None:
            continue
        messages = run.get("messages")
        if not isinstance(messages, list):
            continue
        child = Transcript(metadata={"source_format": NAME})
        nested = ConverseBuilder(child, builder.source_name)
        description = run.get("agent")
        if isinstance(description, Mapping):
            apply_agent(nested, description)
        for line, message in enumerate(messages, start=1):
            nested.feed_message(message, line)
        texts = [e.text for e in child.entries if isinstance(e, AssistantText)]
        result = call.result.text if call.result is not None else None
        if not texts or result is None or texts[-1].strip() != result.strip():
            continue
        if run.get(_PAST_BOUND) is True:
            named = f"{call.subagent.name!r}" if call.subagent.name else "its agent"
            what = f"sub-agent {named} of call {call.call_id}"
            instead = f"turnfold.load() of {named} shows its last run and the agents under it"
            top.warn(too_deep(what, level + 1, instead), None)
            # Its steps are in the agent, not missing: the call shows its line and result.
            builder.transcript.update(
                call, subagent=dataclasses.replace(call.subagent, steps_missing=False)
            )
            continue
        attach_agent_runs(nested, level + 1, top)
        builder.transcript.update(
            call,
            subagent=dataclasses.replace(
                call.subagent,
                transcript=child,
                steps_missing=False,
                tool_count=len(child.tool_calls()),
            ),
        )


def _removed_notice(builder: ConverseBuilder, description: Mapping[str, Any]) -> None:
    """The agent's conversation manager dropped its first messages (a sliding window keeps
    40 by default): they are not in ``agent.messages``, and the view says so."""
    removed = as_int(description.get("removed_messages"))
    if removed:
        manager = description.get("conversation_manager")
        key = "reader.messages_removed.by" if manager else "reader.messages_removed"
        params = {"count": removed, "manager": manager}
        builder.transcript.append(notice(key, params, level="warning", subtype="removed"))


def _read_document(source: Source, builder: ConverseBuilder, document: Mapping[str, Any]) -> None:
    metadata = builder.transcript.metadata
    if "role" in document and "content" in document:  # one message
        builder.feed_noted(source, document, 1, role_of(document))
        return
    description = document.get(AGENT_KEY)
    if isinstance(description, Mapping):
        apply_agent(builder, description)  # before the messages: it says which tools are agents
        _removed_notice(builder, description)
        builder.recognized += 1  # an agent that has not run yet is still an agent
    for key, value in document.items():
        if key == "messages" and isinstance(value, list):
            for line, message in enumerate(value, start=1):
                builder.feed_noted(source, message, line, role_of(message))
            continue
        if key == "output" and isinstance(value, Mapping):
            builder.feed_message(value.get("message"), 1, usage=document.get("usage"))
        elif key == RESULT_KEY and isinstance(value, Mapping):
            _read_result(builder, value)
        elif key == AGENT_KEY:
            pass  # read first
        elif key == "system":
            system = _system_text(value)
            if system:
                metadata["system"] = system
        elif key == "modelId" and isinstance(value, str):
            metadata["model"] = value
        elif key == "usage":
            usage = converse_usage(value)
            if usage is not None and "output" not in document:
                metadata["usage"] = counts_of(usage)  # turnfold.usage's names, not Converse's
        elif key == "stopReason":
            metadata["stop_reason"] = value
            _stop_notice(builder, value)
        elif key == "metrics":
            latency = value.get("latencyMs") if isinstance(value, Mapping) else None
            if latency is not None:
                metadata["latency_ms"] = latency
        elif key in _SETTINGS:
            source.ignored(key)
            continue
        else:
            source.ignored("other key")
            continue
        source.mapped(key)
    if isinstance(description, Mapping):  # after the messages: it settles their calls
        stopped = description.get("interrupt_state")
        if isinstance(stopped, Mapping):
            builder.interrupted(stopped.get("interrupts"), stopped.get("completed_tool_results"))


def _stop_notice(builder: ConverseBuilder, reason: Any) -> None:
    if reason == "max_tokens":
        builder.transcript.append(notice("reader.cut_off_max_tokens", level="warning",
                                         subtype="max_tokens"))  # fmt: skip
    elif reason in ("guardrail_intervened", "content_filtered"):
        builder.transcript.append(failure("reader.blocked", {"reason": reason}))


def _read_result(builder: ConverseBuilder, record: Mapping[str, Any]) -> None:
    """An ``AgentResult``: only its last message is in it, and the notice says so."""
    metadata = builder.transcript.metadata
    tools = record.get("tool_metrics")
    calls = 0
    if isinstance(tools, Mapping) and tools:
        metadata["tool_metrics"] = dict(tools)
        calls = sum(
            as_int(c.get("call_count")) or 0 for c in tools.values() if isinstance(c, Mapping)
        )
    usage = converse_usage(record.get("accumulated_usage"))  # Converse's names, cache apart
    if usage is not None:
        metadata["usage"] = counts_of(usage)
    if record.get("stop_reason") is not None:
        metadata["stop_reason"] = record["stop_reason"]
    key = "reader.partial_agent_result.calls" if calls else "reader.partial_agent_result"
    builder.transcript.append(notice(key, {"calls": calls}, subtype="partial"))
    builder.feed_message(record.get("message"), 1)
    builder.interrupted(record.get("interrupts"))
    # Its message is the call of the structured output tool, without the result that says
    # it validated: the result's ``structured_output`` is the answer.
    structured_answer(builder.transcript, record.get("structured_output"))


# --- live (spec A-2) --------------------------------------------------------------------------


class Follower:
    """Maps ``agent.stream_async`` events into ``transcript`` as they arrive (spec A-2)."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        transcript.metadata.setdefault("source_format", NAME)
        self.builder = ConverseBuilder(transcript, "<stream>", live=True)
        #: The messages fed, by identity (and kept, so an id is never reused).
        self._fed: dict[int, Any] = {}
        self._agent: Any = None
        #: Entries the stream shows for the message being written, in block order.
        self._shown: list[Entry] = []
        self._block: Entry | None = None
        self._parts: list[str] = []
        #: The run of each agent used as a tool, followed from its events, by call id.
        self._children: dict[str, Follower] = {}
        #: Messages that came before any event carried the agent: a run resumed with
        #: interrupt responses first stores the results of the calls it stopped at, whose
        #: calls are in the agent's messages, read when it comes (:meth:`_adopt`).
        self._held: list[Any] = []

    def feed(self, event: Any) -> None:
        if not isinstance(event, Mapping):
            return
        if self._agent is None and "agent" in event:
            self._adopt(event["agent"])
        if "data" in event:
            self._grow(AssistantText, event["data"])
        elif "current_tool_use" in event:
            self._tool(event["current_tool_use"])
        elif "reasoningText" in event:
            self._grow(Thinking, event["reasoningText"])
        elif "reasoningRedactedContent" in event:
            self._end_block()
            data = _base64(event["reasoningRedactedContent"])
            self._show(Thinking(form="redacted", data=data))
        elif "event" in event:
            self._chunk(event["event"])
        elif "message" in event:
            self._message(event["message"])
        elif event.get("type") == "tool_stream":
            self._tool_stream(event.get("tool_stream_event"))
        elif "tool_interrupt_event" in event:
            self._interrupt(event["tool_interrupt_event"])
        elif "result" in event:
            # The AgentResult: a run stopped by interrupts lists them (an invocation's own
            # interrupts come in no tool's event).
            interrupts = getattr(event["result"], "interrupts", None)
            for interrupt in interrupts or ():
                self.builder.interrupt(_interrupt(interrupt))
        elif event.get("force_stop"):
            reason = event.get("force_stop_reason")
            self.transcript.append(failure("reader.stopped", {"reason": reason}))
        elif not any(key in _QUIET_EVENTS for key in event):
            self._warn_once(event)

    def close(self) -> None:
        self._end_block()
        held, self._held = self._held, []
        for message in held:  # no event carried the agent: read as they came
            if id(message) not in self._fed:
                self._feed(message)
        for call_id, child in self._children.items():
            child.close()
            call = self.builder._calls.get(call_id)
            if call is not None and call.subagent is not None:
                count = len(child.transcript.tool_calls())
                sub = dataclasses.replace(call.subagent, tool_count=count)
                self.transcript.update(call, subagent=sub)
        if self._agent is not None:  # the agents used as tools now hold their last runs
            description = agent_description(self._agent)
            apply_agent(self.builder, description)
            attach_agent_runs(self.builder)
            stopped = description.get("interrupt_state")
            if isinstance(stopped, Mapping):  # the results no event carried, as a load
                self.builder.interrupted(
                    stopped.get("interrupts"), stopped.get("completed_tool_results")
                )
        self.builder.settle_open(self.builder._calls.values())

    # --- what the stream shows ----------------------------------------------------------------

    def _adopt(self, agent: Any) -> None:
        """The agent the run belongs to: its description, and the messages it held before
        the stream began (the prompt, earlier turns)."""
        if not type(agent).__module__.startswith("strands"):
            return
        self._agent = agent
        apply_agent(self.builder, agent_description(agent))
        system = getattr(agent, "system_prompt", None)
        if isinstance(system, str) and system:
            self.transcript.metadata["system"] = system
        messages = getattr(agent, "messages", None)
        messages = list(messages) if isinstance(messages, list) else []
        # Up to the prompt, the last user message that is not only tool results: what comes
        # after it is this run's, and arrives as message events (all of it already, when
        # events recorded during a run are replayed after it). A resumed run's messages held
        # until now are its first: everything before them is earlier runs'.
        held = {id(m) for m in self._held}
        first = next((i for i, m in enumerate(messages) if id(m) in held), None)
        if first is None:
            first = max((i for i, m in enumerate(messages) if _is_prompt(m)), default=-1) + 1
        for message in messages[:first]:
            if id(message) not in self._fed:
                self._feed(message)
        held_now, self._held = self._held, []
        for message in held_now:
            self._message(message)

    def _show(self, entry: Entry) -> Entry:
        self._shown.append(self.transcript.append(entry))
        self._block = entry
        return entry

    def _grow(self, kind: type[AssistantText] | type[Thinking], piece: Any) -> None:
        if not isinstance(piece, str):
            return
        block = self._block
        if type(block) is not kind:
            self._end_block()
            self._parts = [piece]
            if kind is Thinking:
                self._show(Thinking(text=piece, streaming=True))
            else:
                self._show(AssistantText(text=piece))
            return
        assert block is not None
        self._parts.append(piece)
        self.transcript.update(block, text="".join(self._parts))

    def _tool(self, current: Any) -> None:
        if not isinstance(current, Mapping):
            return
        call_id = current.get("toolUseId")
        call_id = call_id if isinstance(call_id, str) else ""
        block = self._block
        if isinstance(block, ToolCall) and block.call_id == call_id:
            if block.args is not current.get("input"):
                self.transcript.update(block, args=current.get("input"))
            return
        self._end_block()
        line = len(self._fed) + 1
        call = self.builder.new_call(call_id, current.get("name"), None, f"msg-{line}")
        call.args = current.get("input")  # the JSON being written, parsed when its block ends
        self._show(call)

    def _end_block(self) -> None:
        block, self._block = self._block, None
        if isinstance(block, ToolCall) and isinstance(block.args, str):
            args = parse_arguments(block.args)
            self.transcript.update(block, args=args, description=describe_args(block.name, args))

    def _chunk(self, chunk: Any) -> None:
        if not isinstance(chunk, Mapping):
            return
        if "contentBlockStop" in chunk:
            self._end_block()
        elif "messageStart" in chunk:
            self._end_block()
            self._shown = []

    def _message(self, message: Any) -> None:
        if id(message) in self._fed:
            return
        if self._agent is None and not self._fed and _is_results(message):
            self._held.append(message)  # results before any event carried the agent
            return
        self._end_block()
        self._feed(message, reuse=self._shown)
        self._shown = []

    def _feed(self, message: Any, reuse: list[Entry] | None = None) -> None:
        self._fed[id(message)] = message
        role = message.get("role") if isinstance(message, Mapping) else None
        self.builder.feed_message(
            message, len(self._fed), reuse=reuse if role == "assistant" else None
        )

    def _warn_once(self, event: Mapping[str, Any]) -> None:
        """An event of a kind not shown: said once per kind (its keys), never silently."""
        kind = ", ".join(sorted(str(key) for key in event)) or "empty"
        self.builder.warn_once(f"event {{{kind}}} not shown", len(self._fed) or None)

    def _interrupt(self, event: Any) -> None:
        """``tool_interrupt_event``: a hook or the tool itself interrupted the call for a
        human's answer (``ToolInterruptEvent`` in ``types/_events.py``); the run stops once
        its calls are done, and the call waits."""
        if not isinstance(event, Mapping):
            return
        tool_use = event.get("tool_use")
        call_id = tool_use.get("toolUseId") if isinstance(tool_use, Mapping) else None
        call = self.builder._calls.get(call_id) if isinstance(call_id, str) else None
        for interrupt in event.get("interrupts") or ():
            self.builder.interrupt(_interrupt(interrupt), call)

    def _tool_stream(self, stream: Any) -> None:
        """A tool's progress. An agent used as a tool streams its own run's events inside
        the parent's (those of its model carry that agent): they are followed into the
        transcript of its call's :class:`SubAgent`, which grows as the child runs."""
        if not isinstance(stream, Mapping):
            return
        tool_use, data = stream.get("tool_use"), stream.get("data")
        child = data.get("agent") if isinstance(data, Mapping) else None
        name = getattr(child, "name", None)
        call_id = tool_use.get("toolUseId") if isinstance(tool_use, Mapping) else None
        call = self.builder._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None or not isinstance(call_id, str):
            return
        follower = self._children.get(call_id)
        if follower is None:
            if call.subagent is None and not _is_agent(child):
                return  # a plain tool's progress: nothing of it is shown
            follower = self._children[call_id] = Follower(Transcript())
            known = call.subagent.name if call.subagent is not None else None
            agent_name = name if isinstance(name, str) else known
            sub = SubAgent(name=agent_name, transcript=follower.transcript)
            self.transcript.update(call, subagent=sub)
        follower.feed(data)
        if call.subagent is not None:  # tell the parent's observers the child grew
            self.transcript.update(call, subagent=call.subagent)


RECORDS = Records(
    mapped={
        "user": "the prompt (UserMessage with images and attachment lines), or toolResult "
        "blocks settling their calls (status success / error); the structured output tool's "
        "validated result makes that call's input the answer",
        "assistant": "text, reasoning and toolUse blocks in order (one batch); "
        "metadata.usage on its last text",
        "messages": "a Converse request's messages, each accounted for by its role",
        "output": "a Converse response's message (as assistant), with the response's usage",
        "system": 'the system prompt: metadata["system"]',
        "modelId": 'metadata["model"]',
        "usage": "a response's usage, on its message",
        "stopReason": 'metadata["stop_reason"]; max_tokens a warning notice, '
        "guardrail_intervened / content_filtered an AssistantError",
        "metrics": 'a response\'s latency: metadata["latency_ms"]',
        AGENT_KEY: "a Strands Agent's name, model id and agent tools (their calls are "
        "sub-agents; each one's last run, its messages from its last prompt on, is the "
        "transcript of its last call when it ends with that call's result, other calls have "
        "steps missing); messages its conversation manager removed: a warning notice; its "
        "interrupt state when stopped: the calls' completed results, a PendingAction per "
        "interrupt (its call confirming)",
        "session_message": "a stored SessionMessage (message_<n>.json): its message (the "
        "redacted one when redacted), its entries stamped with created_at",
        RESULT_KEY: "an AgentResult: its last message, a notice that the calls are not in it, "
        "its per-tool counts and usage in metadata, a PendingAction per interrupt, its "
        "structured_output as the answer",
    },
    ignored={
        **dict.fromkeys(_SETTINGS, "request or response settings, no step of the conversation"),
        "other key": "other keys of a request or response",
    },
)
