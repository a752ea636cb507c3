"""Microsoft Agent Framework runs (spec A-1, A-2, A-3; issue 22): ``agent-framework-core``'s
``AgentResponse``, its ``Message`` lists, an ``AgentSession``, the ``AgentResponseUpdate``
stream of ``agent.run(..., stream=True)``, and the events of a workflow (``WorkflowBuilder``
and the orchestrations' ``SequentialBuilder`` / ``ConcurrentBuilder`` / ``HandoffBuilder`` /
group chat / magentic), with the framework's own JSON forms of them.

Input shapes (each the framework's ``to_dict()``, which its ``to_json()`` writes):

- an ``AgentResponse`` (``{"type": "agent_response", "messages", "response_id",
  "created_at", "usage_details", "finish_reason"…}``), or a ``ChatResponse`` (``"type":
  "chat_response"``, which also names its ``model``);
- a ``Message`` (``{"type": "message", "role", "contents": [...], "author_name"}``) or a list
  of them (a session's history, ``InMemoryHistoryProvider``'s ``state["messages"]``), as a
  JSON document or one message a line;
- an ``AgentSession`` (``{"type": "session", "session_id", "state": {<provider>:
  {"messages": [...]}}}``): the messages of each history provider's state;
- a workflow run (``WorkflowRunResult``, the events ``workflow.run(...)`` returns, or
  ``get_final_response()`` of a streamed run): :func:`plain` makes it ``{"type":
  "agent_framework_workflow", "events": [...]}``, one record per event that shows something.

Objects: :func:`plain` serializes with the framework's own ``to_dict()`` (an
``AgentResponse``, ``Message``, ``AgentSession``), adding the model id, which the response
holds only in its ``raw_representation`` (the last ``ChatResponse``, or the updates it was
merged from) and ``to_dict()`` leaves out.

Mapping, content by content (``Content.type``):

- a ``user`` message's ``text`` → :class:`UserMessage`, ``data`` / ``uri`` images (``data:``
  URIs) its images, other media an attachment line; ``system`` → ``metadata["system"]``;
- an ``assistant`` message's contents in order: ``text`` → :class:`AssistantText` (with the
  response's model; the text function invocation writes in the answer's place when its
  ``max_iterations`` ran out, :data:`INVOCATION_LIMIT_TEXT`, a warning notice),
  ``text_reasoning`` → :class:`Thinking` (only ``protected_data``:
  ``encrypted``), ``function_call`` → :class:`ToolCall` (``call_id`` verbatim, ``arguments`` a
  dict or a JSON string), the calls of one message one batch; ``error`` →
  :class:`AssistantError`; ``function_approval_request`` → the call waits (``confirming``) with a
  :class:`PendingAction` ``permission``;
- a ``tool`` message's ``function_result`` settles the call with its ``call_id``: an
  ``exception`` is the framework's error signal (a tool that raised) → ``error``, else
  ``success``; ``result`` (the text the model was given) is the result, images among its
  ``items`` its images; a call whose approval the user refused (its user message's
  ``function_approval_response`` with ``approved: false``, or, from 1.26, the
  ``_approval_rejection_result`` mark on the result the framework writes for it) is
  ``cancelled``. The exception's own text is not shown: the framework keeps it out of
  its serialization as possibly sensitive (``to_dict()`` writes a marker) and gives the model
  ``"Error: Function failed."``;
- the response's ``usage_details`` (``input_token_count``, ``output_token_count``,
  ``cache_read_input_token_count``, ``reasoning_token_count``…) → the :class:`Usage` of its
  last text. The function-invocation loop adds up the usage of every model call of a run into
  this one total, so a run's usage sits on its last text, not per model call;
  ``created_at`` → the ``timestamp`` of the entries of its last assistant message (the time
  of the last model response); ``response_id``, ``finish_reason`` and the first
  ``author_name`` (the agent's name) → ``metadata``; ``finish_reason`` ``length`` adds a warning
  notice, ``content_filter`` an :class:`AssistantError`;
- hosted tools' contents (code interpreter, search, MCP, image generation, shell…) and other
  content types are said once each in a warning, not shown.

Compaction (``agent_framework/_compaction.py``: a ``CompactionProvider``'s ``after_strategy``
rewrites the session's stored history; a client's or agent's ``compaction_strategy`` compacts
in the run, and the function-invocation loop puts its summaries in the response). The
strategies keep every message and mark it in ``additional_properties``; what they mark is
read so (:class:`Compaction`):

- a summary (``SummarizationStrategy``'s, the summariser's text; ``ToolResultCompactionStrategy``'s
  ``[Tool results: …]``), an assistant message whose ``_group`` names the messages it stands
  for (``_summary_of_message_ids``) → a :class:`CompactionBoundary` of its text, never an
  answer. The framework stores it before those messages and records no time of it: it is
  shown where what it summarised ends, before the first prompt after the last message it
  names (a ``CompactionProvider`` listed after the history provider compacts, when a run
  ends, the runs before it); summaries due at one place are one boundary. A summary that a
  later one stands for (its ``_summarized_by_summary_id``) keeps its own boundary;
- a message left out of the context (``_excluded`` true, its ``_exclude_reason``:
  ``summarized``, ``tool_result_compaction``, ``sliding_window``, ``truncation``,
  ``tool_call_compaction``, ``token_budget_fallback``…) still happened: its entries are shown
  where they were, before the boundary, with ``meta["excluded"]`` the reason; messages left out
  with no summary (a sliding window, a truncation) → a :class:`CompactionBoundary` with no
  summary before the next prompt still in the context (or at the end), ``trigger`` the
  reason;
- the boundary's ``trigger`` is the reasons of the messages it stands for, its
  ``meta["summary_ids"]`` the summaries' ids and ``meta["excluded_messages"]`` how many;
- the summariser's response is not recorded (the strategy keeps its text only, not its usage
  or model), so it counts in no total (L-3); a ``before_strategy`` compacts only what one
  model call is sent and marks nothing in the session, nor does a streamed run (its updates
  carry no summary): not shown.

Not recorded, so not shown (L-3): the messages hold no timestamps of their own and no
durations; the prompt is not part of an ``AgentResponse`` (load the session for it); an agent
used as a tool (``agent.as_tool()``) runs its own conversation that the parent's messages do
not hold: with ``agent=`` (``load(response, agent=agent)``, ``follow(stream, agent=agent)``)
its calls are sub-agents whose steps are missing, known by the tool's function closing over
an agent.

Workflows: each agent executor's run is a :class:`ToolCall` named by its executor id whose
:class:`SubAgent` holds that agent's response read as above (so sequential, concurrent and
handoff agents each nest, in the order they ran). The response comes from the executor's
``executor_completed`` event (an ``AgentExecutorResponse``'s ``agent_response``, or an
``AgentResponse``), or its ``output`` event; a run known only from streamed updates is merged
with the framework's own ``AgentResponse.from_updates``. The first executor's input (the text
or the user messages the workflow was run with) is the :class:`UserMessage`;
``handoff_sent`` → a notice (subtype ``handoff``); ``request_info`` (a handoff workflow
waiting for the user's reply, a request of an executor) → a :class:`PendingAction` ``question``;
``executor_failed`` makes the executor's call an error (else an :class:`AssistantError`),
``failed`` is an :class:`AssistantError`; a text ``output`` of a non-agent executor is an
:class:`AssistantText`, and an agent response gathered from several agents (a concurrent
workflow's aggregator) one :class:`AssistantText` per answer (``meta["author"]``), not an
agent's run. A group chat's ``GroupChatRequestSentEvent`` is a notice naming the next
speaker (subtype ``speaker``); a magentic manager's plan (``plan_created`` / ``replanned``) a
notice (subtype ``plan`` / ``replan``), each progress ledger a ``speaker`` notice with the
instruction given (or that the task is done). Superstep and status events are bookkeeping,
ignored.

Live (A-2): ``agent.run(..., stream=True)`` yields ``AgentResponseUpdate``s whose contents are
deltas: text and reasoning grow in place, a call shows ``executing`` as it arrives (its
arguments growing when streamed in pieces) and its result settles it; when the stream ends the
usage, model and time are placed as a load of ``AgentResponse.from_updates(updates)`` (what
``await stream.get_final_response()`` gives) places them, so the followed transcript equals
that load. A workflow's ``stream=True`` events nest each agent's run as its updates arrive
(``output`` events), and each executor's completed response then settles its call's
sub-agent as a load of the run's ``WorkflowRunResult`` reads it.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Container, Iterable, Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MessageBuilder,
    NameSet,
    approval_text,
    as_list,
    checked_timestamp,
    counted_usage,
    describe_args,
    parse_arguments,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source, plain_each, type_of_record, warning_count
from turnfold.formats.wording import failure
from turnfold.formats.wording import notice as worded_notice
from turnfold.formats.wrappers import listed_evidence, sample
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import attach_usage

NAME = "agent-framework"
#: ``agent=`` names the tools that are agents (``agent.as_tool()``): the run does not.
READS_AGENT = True

ROLES = NameSet({"user", "assistant", "tool", "system"})
#: The ``type`` of each JSON form the framework writes, and of :func:`plain`'s workflow.
RESPONSE_TYPES = NameSet({"agent_response", "chat_response"})
MESSAGE_TYPE = "message"
SESSION_TYPE = "session"
WORKFLOW_TYPE = "agent_framework_workflow"
#: Content types of the framework (``ContentType`` in ``agent_framework/_types.py``): a
#: message whose contents are all typed so is the framework's.
CONTENT_TYPES = NameSet(
    {"text", "text_reasoning", "error", "function_call", "function_result", "usage",
     "hosted_file", "hosted_vector_store", "code_interpreter_tool_call",
     "code_interpreter_tool_result", "image_generation_tool_call",
     "image_generation_tool_result", "mcp_server_tool_call", "mcp_server_tool_result",
     "function_approval_request", "function_approval_response", "search_tool_call",
     "search_tool_result", "shell_tool_call", "shell_tool_result", "shell_command_output",
     "computer_tool_call", "computer_tool_result", "oauth_consent_request", "data", "uri"}
)  # fmt: skip
#: Types no other format's content blocks carry.
_MARK_TYPES = NameSet(
    {"text_reasoning", "function_call", "function_result", "usage", "function_approval_request",
     "function_approval_response", "hosted_file", "mcp_server_tool_call"}
)  # fmt: skip
#: The mark 1.26 puts in ``additional_properties`` of the result it writes for a call whose
#: approval the user refused (``_APPROVAL_REJECTION_RESULT_KEY``); earlier releases write the
#: same result without it (the refusal is then known from the user's approval response).
_REJECTION_KEY = "_approval_rejection_result"
#: What ``to_dict()`` writes for a failed call's ``exception`` (the text is kept out).
_EXCEPTION_MARKER = "FunctionInvocationError"
#: Workflow events that are the runner's bookkeeping, not steps of the run.
_BOOKKEEPING_EVENTS = NameSet(
    {"started", "status", "superstep_started", "superstep_completed", "executor_invoked",
     "executor_completed", "executor_bypassed", "warning", "intermediate", "data"}
)  # fmt: skip


# --- detection ------------------------------------------------------------------------------


def _content_verdict(content: Any) -> int:
    if not isinstance(content, Mapping):
        return NOT_MINE
    kind = content.get("type")
    if kind not in CONTENT_TYPES:
        return NOT_MINE
    return DISTINCTIVE if kind in _MARK_TYPES else READABLE


def _classify(message: Any) -> int:
    """A ``Message.to_dict()``: ``type: "message"``, a role and typed ``contents``."""
    if not isinstance(message, Mapping) or message.get("role") not in ROLES:
        return NOT_MINE
    contents = message.get("contents")
    if not isinstance(contents, list):
        return NOT_MINE
    verdicts = [_content_verdict(c) for c in contents]
    if NOT_MINE in verdicts:
        return NOT_MINE
    # ``contents`` (not ``content``) with typed items is the framework's own spelling, and
    # ``type: "message"`` its serialization's tag.
    if message.get("type") == MESSAGE_TYPE or DISTINCTIVE in verdicts:
        return DISTINCTIVE
    return READABLE


_LACKS = "no Message with typed contents"


def detect(source: Source) -> Evidence:
    """An ``AgentResponse`` / ``ChatResponse``, ``Message`` list, ``AgentSession`` or workflow."""
    listed = listed_evidence(source, _classify, _LACKS)
    if listed is not None:
        return listed
    document = source.document
    if not isinstance(document, Mapping):
        return Evidence.none("no agent-framework object")
    kind = document.get("type")
    if kind == WORKFLOW_TYPE and isinstance(document.get("events"), list):
        return Evidence(share=1.0, marks=2)
    if kind == SESSION_TYPE and isinstance(document.get("state"), Mapping):
        messages = session_messages(document)
        if not messages:
            return Evidence(share=1.0, marks=1)
        return Evidence.of(sample(messages), _classify, _LACKS)
    if kind in RESPONSE_TYPES and isinstance(document.get("messages"), list):
        evidence = Evidence.of(sample(document["messages"]), _classify, _LACKS)
        return (
            Evidence(share=evidence.share, marks=evidence.marks + 1) if evidence.fits else evidence
        )
    if kind == MESSAGE_TYPE:
        return Evidence.of([document], _classify, _LACKS)
    return Evidence.none("no agent-framework response, message, session or workflow")


def session_messages(document: Mapping[str, Any]) -> list[Any]:
    """The messages of an ``AgentSession.to_dict()``: each history provider's
    ``state[<source id>]["messages"]``, in the order the state holds them."""
    state = document.get("state")
    messages: list[Any] = []
    for value in state.values() if isinstance(state, Mapping) else ():
        if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
            messages.extend(value["messages"])
    return messages


# --- the builder ----------------------------------------------------------------------------


def usage_of(raw: Any) -> Usage | None:
    """``UsageDetails`` (``input_token_count``, ``output_token_count``…) as :class:`Usage`."""
    if not isinstance(raw, Mapping):
        return None
    return counted_usage(
        raw.get("input_token_count"),
        raw.get("output_token_count"),
        raw.get("cache_read_input_token_count") or raw.get("openai.cached_input_tokens"),
        raw.get("cache_creation_input_token_count"),
        raw.get("reasoning_token_count") or raw.get("openai.reasoning_tokens"),
    )


def _data_image(content: Mapping[str, Any]) -> ImageData | None:
    """An image ``data`` / ``uri`` content with its bytes in a ``data:`` URI."""
    uri, media_type = content.get("uri"), content.get("media_type")
    if not isinstance(uri, str) or not uri.startswith("data:"):
        return None
    head, _, data = uri.partition(",")
    if not head.endswith(";base64") or not data:
        return None
    kind = media_type if isinstance(media_type, str) else head[5:].split(";")[0]
    return ImageData(media_type=kind, data=data) if kind.startswith("image/") else None


def attachment_line(content: Mapping[str, Any]) -> str:
    """A media or file content as one line (a ``data:`` URI's bytes left out)."""
    parts = [str(content.get("type"))]
    media_type, uri = content.get("media_type"), content.get("uri")
    if isinstance(media_type, str) and media_type:
        parts.append(media_type)
    if isinstance(uri, str) and uri and not uri.startswith("data:"):
        parts.append(uri)
    file_id = content.get("file_id")
    if isinstance(file_id, str) and file_id:
        parts.append(file_id)
    return f"[attachment: {' · '.join(parts)}]"


def _text_of(content: Mapping[str, Any]) -> str:
    text = content.get("text")
    return text if isinstance(text, str) else ""


# --- compaction ------------------------------------------------------------------------------

#: Where the compaction strategies mark a message (``additional_properties``), and the marks
#: (``agent_framework/_compaction.py``'s ``GROUP_ANNOTATION_KEY``, ``EXCLUDED_KEY``…).
_GROUP_KEY = "_group"
_EXCLUDED_KEY = "_excluded"
_EXCLUDE_REASON_KEY = "_exclude_reason"
_SUMMARY_OF_KEY = "_summary_of_message_ids"
_SUMMARIZED_BY_KEY = "_summarized_by_summary_id"
#: The contents that make a user message a prompt (a new turn), not an answer to an approval.
_PROMPT_CONTENTS = NameSet({"text", "data", "uri"})


def _marks(message: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """A message's ``additional_properties`` and the ``_group`` annotation in it."""
    extra = message.get("additional_properties")
    extra = extra if isinstance(extra, Mapping) else {}
    group = extra.get(_GROUP_KEY)
    return extra, group if isinstance(group, Mapping) else {}


def summarized_ids(message: Mapping[str, Any]) -> list[str] | None:
    """The ids of the messages a compaction summary stands for; None for another message."""
    _, group = _marks(message)
    ids = group.get(_SUMMARY_OF_KEY)
    if message.get("role") != "assistant" or not isinstance(ids, list) or not ids:
        return None
    return [i for i in ids if isinstance(i, str)] or None


def _message_id(message: Mapping[str, Any]) -> str | None:
    own = message.get("message_id")
    return own if isinstance(own, str) and own else None


@dataclasses.dataclass
class _Summary:
    """A summary read and not shown yet: it waits for the messages it names."""

    id: str
    text: str
    names: list[str]
    line: int
    missing: set[str]  # the messages it names not read yet
    reasons: list[str] = dataclasses.field(default_factory=list)
    excluded: int = 0


class Compaction:
    """The compaction marks of the messages read, in order, and the boundaries they make (see
    the module's docstring): a summary waits until the messages it names have been read and is
    shown before the next prompt; messages left out with no summary are shown as one boundary
    before the next prompt still in the context."""

    def __init__(self) -> None:
        self.read: set[str] = set()  # the ids of the messages read
        self.known: dict[str, _Summary] = {}  # every summary read, by id
        #: The summaries waiting for a message, by its id; those whose messages are all read.
        self.wanting: dict[str, list[_Summary]] = {}
        self.ready: list[_Summary] = []
        #: The reasons of the messages left out with no summary since the last boundary.
        self.dropped: list[str] = []

    def note(self, message: Mapping[str, Any], line: int) -> bool:
        """Read ``message``'s marks; True when it is a summary (shown later, as a boundary)."""
        own = _message_id(message)
        if own is not None:
            self.read.add(own)
            for summary in self.wanting.pop(own, ()):
                summary.missing.discard(own)
                if not summary.missing:
                    self.ready.append(summary)
        names = summarized_ids(message)
        if names is None:
            return False
        self.excluded(message)  # a summary a later summary stands for
        contents = as_list(message.get("contents"))
        text = "\n".join(_text_of(c) for c in contents if isinstance(c, Mapping)).strip()
        missing = set(names) - self.read
        summary = _Summary(id=own or f"#{line}", text=text, names=names, line=line, missing=missing)
        self.known[summary.id] = summary
        for name in missing:
            self.wanting.setdefault(name, []).append(summary)
        if not missing:
            self.ready.append(summary)
        return True

    def excluded(self, message: Mapping[str, Any]) -> str | None:
        """Why ``message`` was left out of the context (None: it was not); one no summary
        stands for is owed a boundary of its own."""
        extra, group = _marks(message)
        if extra.get(_EXCLUDED_KEY) is not True:
            return None
        reason = extra.get(_EXCLUDE_REASON_KEY)
        reason = reason if isinstance(reason, str) and reason else "excluded"
        summary = self.known.get(str(group.get(_SUMMARIZED_BY_KEY)))
        if summary is None:
            self.dropped.append(reason)
        else:
            summary.reasons.append(reason)
            summary.excluded += 1
        return reason

    def before_prompt(self, message: Mapping[str, Any]) -> CompactionBoundary | None:
        """The boundary due before the prompt ``message``: the summaries whose messages have
        all been read, and, when the prompt is in the context, what was left out unsummarised."""
        due, self.ready = self.ready, []
        extra, _ = _marks(message)
        return self._boundary(due, dropped=extra.get(_EXCLUDED_KEY) is not True)

    def at_end(self) -> tuple[CompactionBoundary | None, list[_Summary]]:
        """The boundary of everything still owed, and the summaries naming messages never read."""
        unread = list({id(s): s for waiting in self.wanting.values() for s in waiting}.values())
        self.wanting = {}
        due, self.ready = self.ready + unread, []
        return self._boundary(due, dropped=True), sorted(unread, key=lambda s: s.line)

    def _boundary(self, due: list[_Summary], *, dropped: bool) -> CompactionBoundary | None:
        due = sorted(due, key=lambda s: s.line)  # in the order the history holds them
        reasons = [r for s in due for r in s.reasons]
        excluded = sum(s.excluded for s in due)
        if dropped:
            reasons += self.dropped
            excluded += len(self.dropped)
            self.dropped = []
        if not due and not excluded:
            return None
        texts = [s.text for s in due if s.text]
        meta: dict[str, Any] = {"excluded_messages": excluded}
        if due:
            meta["summary_ids"] = [s.id for s in due]
        return CompactionBoundary(
            summary="\n\n".join(texts) or None,
            trigger=", ".join(dict.fromkeys(reasons)) or None,
            meta=meta,
        )


#: The text the function-invocation loop writes as the assistant's message when its
#: ``max_iterations`` ran out before the model answered (``agent_framework/_tools.py``'s
#: ``_FUNCTION_INVOCATION_LIMIT_FALLBACK_TEXT``; the model's last calls are dropped unrun):
#: no model wrote it, so it is no answer but a warning notice.
INVOCATION_LIMIT_TEXT = "Function invocation limit reached before a final answer could be produced."


class AgentFrameworkBuilder(MessageBuilder):
    """Builds a transcript from the framework's messages and responses (loaded or live).

    ``agent_tools`` maps the name of a tool that is an agent (``as_tool()``) to that agent's
    name: its calls are sub-agents whose steps the messages do not hold.
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<messages>",
        *,
        live: bool = False,
        agent_tools: Mapping[str, str | None] | None = None,
    ) -> None:
        super().__init__(transcript, source_name, live=live)
        self.agent_tools = dict(agent_tools or {})
        self.recognized = 0
        #: How many messages with contents were fed: a call's batch is its message's number.
        self.messages = 0
        #: The entries of each message fed, in order (a response's usage and time go on them).
        self.assistant_entries: list[list[Entry]] = []
        #: The calls whose approval the user refused (``function_approval_response``).
        self.denied: set[str] = set()
        #: Read from a file: the approvals asked and not yet answered, by call id (the call,
        #: the tool's name). The user's answer is a later message, so whether the run still
        #: waits is known at its end (:meth:`settle_open`); followed live, it waits at once.
        self.asked: dict[str, tuple[ToolCall, Any]] = {}
        self.compaction = Compaction()

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        self.feed_message(message, line)

    def feed_message(self, message: Any, line: int, *, model: str | None = None) -> list[Entry]:
        """Add one message's entries (those of an assistant message are returned)."""
        if not isinstance(message, Mapping):
            reason = message.reason if isinstance(message, MalformedLine) else "not a message"
            self.warn(reason, line)
            return []
        role, contents = message.get("role"), message.get("contents")
        if role not in ROLES or not isinstance(contents, list):
            self.warn(f"not an agent-framework message (role {role!r})", line)
            return []
        self.recognized += 1
        compaction = self.compaction
        if compaction.note(message, line):
            return []  # a compaction summary: a boundary, where what it summarised ends
        if not any(isinstance(c, Mapping) and c.get("type") != "usage" for c in contents):
            return []
        if role == "user" and any(
            isinstance(c, Mapping) and c.get("type") in _PROMPT_CONTENTS for c in contents
        ):
            boundary = compaction.before_prompt(message)
            if boundary is not None:
                self.transcript.append(boundary)
        self.messages += 1
        excluded = compaction.excluded(message)
        first = len(self.transcript.entries)
        entries = self._message(message, role, contents, line, model=model)
        if excluded is not None:
            # Left out of the model's context later, but said: shown where it was, marked.
            written = self.transcript.entries
            for index in range(first, len(written)):
                entry = written[index]
                self.update(entry, meta={**entry.meta, "excluded": excluded})
        return entries

    def _message(
        self, message: Mapping[str, Any], role: Any, contents: list[Any], line: int,
        *, model: str | None,
    ) -> list[Entry]:  # fmt: skip
        author = message.get("author_name")
        if role == "assistant" and isinstance(author, str) and author:
            self.transcript.metadata.setdefault("agent", author)
        if role == "system":
            self._system(contents)
            return []
        if role == "user":
            self._user(contents, line)
            return []
        entries: list[Entry] = []
        for content in contents:
            entry = self.content(content, line, model=model)
            if entry is not None:
                entries.append(entry)
        if role == "assistant":
            self.assistant_entries.append(entries)
        return entries

    def _system(self, contents: list[Any]) -> None:
        text = "\n".join(_text_of(c) for c in contents if isinstance(c, Mapping))
        if text:
            metadata = self.transcript.metadata
            known = metadata.get("system")
            metadata["system"] = text if not known or known == text else f"{known}\n\n{text}"

    def _user(self, contents: list[Any], line: int) -> None:
        texts: list[str] = []
        images: list[ImageData] = []
        for content in contents:
            kind = content.get("type") if isinstance(content, Mapping) else None
            if kind == "text":
                texts.append(_text_of(content))
            elif kind in ("data", "uri"):
                image = _data_image(content)
                if image is not None:
                    images.append(image)
                else:
                    texts.append(attachment_line(content))
            elif kind == "function_result":  # a result the caller sent back itself
                self.content(content, line)
            elif kind == "function_approval_response":
                # The user's answer: a refusal is the call's outcome (the framework then
                # writes a result of its own, an error text, as if the call had run).
                function_call = content.get("function_call")
                call_id = (
                    function_call.get("call_id") if isinstance(function_call, Mapping) else None
                )
                if content.get("approved") is False and isinstance(call_id, str):
                    self.denied.add(call_id)
                self._answered(call_id, content.get("approved"))
            else:
                self._unknown(content, line)
        text = "\n\n".join(t for t in texts if t)
        if text or images:
            self.transcript.append(UserMessage(text=text, images=images))

    def content(self, content: Any, line: int, *, model: str | None = None) -> Entry | None:
        """One content of an assistant or tool message: its entry (or None: a result settles
        its call, usage belongs to the response)."""
        if not isinstance(content, Mapping):
            self._unknown(content, line)
            return None
        kind = content.get("type")
        if kind == "text":
            text = _text_of(content)
            if text == INVOCATION_LIMIT_TEXT:  # the loop's, in the model's place: no answer
                notice = SystemNotice(text=text, level="warning", subtype="max_iterations")
                return self.transcript.append(notice)
            return self.transcript.append(AssistantText(text=text, model=model)) if text else None
        if kind == "text_reasoning":
            return self.transcript.append(thinking_of(content))
        if kind == "function_call":
            return self._call(content, line)
        if kind == "function_result":
            self.settle(content, line)
            return None
        if kind == "error":
            return self.transcript.append(AssistantError(message=error_text(content)))
        if kind == "function_approval_request":
            self._approval(content, line)
            return None
        if kind in ("data", "uri", "hosted_file"):
            return self.transcript.append(AssistantText(text=attachment_line(content)))
        if kind != "usage":
            self._unknown(content, line)
        return None

    def _unknown(self, content: Any, line: int) -> None:
        kind = content.get("type") if isinstance(content, Mapping) else type(content).__name__
        self.warn_once(f"content of type {kind!r} not shown", line)

    def _call(self, content: Mapping[str, Any], line: int) -> ToolCall | None:
        call_id = content.get("call_id")
        call_id = call_id if isinstance(call_id, str) else ""
        if not call_id:
            self.warn("function_call without a call_id", line)
        elif call_id in self._calls:
            self.warn(f"duplicate call_id {call_id!r} skipped", line)
            return None
        call = self.new_call(call_id, content.get("name"), content.get("arguments"))
        self.transcript.append(call)
        if call_id:
            self._calls[call_id] = call
        return call

    def new_call(self, call_id: str, name: Any, arguments: Any) -> ToolCall:
        """A call as the format shows it: one batch per message, a sub-agent for an agent."""
        name = name if isinstance(name, str) and name else "tool"
        args = parse_arguments(arguments)
        agent = name in self.agent_tools
        return ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args),
            status=self.open_status,
            batch_id=f"msg-{self.messages}",
            subagent=SubAgent(name=self.agent_tools[name], steps_missing=True) if agent else None,
        )

    def settle(self, content: Mapping[str, Any], line: int) -> None:
        """A ``function_result``: the call's outcome by its ``exception`` (the framework's
        error signal), its result the text the model was given."""
        call_id = content.get("call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"function_result for an unknown call_id {call_id!r}", line)
            return
        result = content.get("result")
        text = result if isinstance(result, str) else None if result is None else stringify(result)
        images = [
            image
            for item in as_list(content.get("items"))
            if isinstance(item, Mapping) and (image := _data_image(item)) is not None
        ]
        failed = content.get("exception") is not None
        extra = content.get("additional_properties")
        denied = call.call_id in self.denied or (
            isinstance(extra, Mapping) and extra.get(_REJECTION_KEY) is True
        )
        self.update(
            call,
            status="cancelled" if denied else "error" if failed else "success",
            result=text_result(text, images=images),
        )

    def _approval(self, content: Mapping[str, Any], line: int) -> None:
        """A call that waits for the user's approval (``approval_mode="always_require"``)."""
        function_call = content.get("function_call")
        if not isinstance(function_call, Mapping):
            self.warn("function_approval_request without its function_call", line)
            return
        call_id = function_call.get("call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            call = self._call(function_call, line)
        name = function_call.get("name")
        if not self.live and call is not None and call.call_id:
            self.asked[call.call_id] = (call, name)  # waits unless a later message answers
            return
        action = self.wait_on_user(call, "permission", approval_text(name))
        self.transcript.append(action)

    def _answered(self, call_id: Any, approved: Any) -> None:
        """The user answered the approval of ``call_id``: the run waits for it no longer, and
        its call keeps the answer (``meta["approval"]``)."""
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            return
        self.asked.pop(call.call_id, None)
        said = "approved" if approved is True else "rejected" if approved is False else "decided"
        self.update(call, meta={**call.meta, "approval": said})

    def settle_open(self, calls: Iterable[ToolCall], *, waiting: Container[str] = ()) -> None:
        """The run ended: an approval nothing answered is what it waits for (a
        :class:`PendingAction` after its last entries); every other call still running has no
        recorded outcome."""
        boundary, unread = self.compaction.at_end()
        for summary in unread:
            missing = ", ".join(n for n in summary.names if n in summary.missing)
            self.warn(
                f"compaction summary {summary.id!r} names messages the history does not hold "
                f"({missing}): shown at the end",
                summary.line,
            )
        if boundary is not None:
            self.transcript.append(boundary)
        for call, name in self.asked.values():
            self.transcript.append(self.wait_on_user(call, "permission", approval_text(name)))
        self.asked.clear()
        super().settle_open(calls, waiting=waiting)

    # --- a response ---------------------------------------------------------------------------

    def response(self, record: Mapping[str, Any], line: int) -> None:
        """An ``AgentResponse`` / ``ChatResponse``: its messages, then what the response says of
        them all (usage, model, time, finish reason)."""
        model = record.get("model")
        model = model if isinstance(model, str) and model else None
        first = len(self.assistant_entries)
        for number, message in enumerate(as_list(record.get("messages")), start=line):
            self.feed_message(message, number, model=model)
        self.finish(
            [entries for entries in self.assistant_entries[first:] if entries],
            model=model,
            usage=record.get("usage_details"),
            created_at=record.get("created_at"),
            response_id=record.get("response_id"),
            finish_reason=record.get("finish_reason"),
            line=line,
        )

    def finish(
        self,
        messages: list[list[Entry]],
        *,
        model: str | None,
        usage: Any,
        created_at: Any,
        response_id: Any,
        finish_reason: Any,
        line: int | None = None,
    ) -> None:
        """What a response says of all its messages, loaded (on ``line``) or at a stream's
        end; a ``created_at`` that is no time is left out, said of the response
        (``common.warned_timestamp``)."""
        metadata = self.transcript.metadata
        if model is not None:
            metadata["model"] = model
        if isinstance(response_id, str) and response_id:
            metadata["response_id"] = response_id
        entries = [entry for entries in messages for entry in entries]
        attach_usage(entries, usage_of(usage), self.transcript, model=model)
        named = f"response {response_id}" if isinstance(response_id, str) and response_id else None
        timestamp = warned_timestamp(created_at, checked_timestamp,
                                     lambda reason: self.warn(reason, line),
                                     named or "the response", name="created_at")  # fmt: skip
        if timestamp is not None and messages:
            for entry in messages[-1]:
                self.update(entry, timestamp=timestamp)
        if isinstance(finish_reason, str):
            metadata["finish_reason"] = finish_reason
            if finish_reason == "length":
                said = worded_notice(
                    "reader.cut_off_max_tokens", level="warning", subtype="max_tokens"
                )
                self.transcript.append(said)
            elif finish_reason == "content_filter":
                self.transcript.append(failure("reader.filtered"))


def thinking_of(content: Mapping[str, Any]) -> Thinking:
    """A ``text_reasoning`` content: its text, or its ``protected_data`` alone (encrypted)."""
    text = _text_of(content)
    protected = content.get("protected_data")
    if not text and isinstance(protected, str) and protected:
        return Thinking(form="encrypted", data=protected)
    return Thinking(text=text)


def error_text(content: Mapping[str, Any]) -> str:
    message, code = content.get("message"), content.get("error_code")
    text = message if isinstance(message, str) and message else "Unknown error"
    return f"Error {code}: {text}" if isinstance(code, str) and code else text


# --- workflows -------------------------------------------------------------------------------


def _agent_run_call(
    builder: AgentFrameworkBuilder, executor_id: str, number: int, child: Transcript | None
) -> ToolCall:
    """The call that stands for an agent executor's run, its sub-agent the agent's response."""
    agent = child.metadata.get("agent") if child is not None else None
    call = ToolCall(
        call_id=f"{executor_id}#{number}",
        name=executor_id,
        status=builder.open_status,
        meta={"workflow_executor": executor_id},
        subagent=SubAgent(name=agent if isinstance(agent, str) else executor_id),
    )
    builder.transcript.append(call)
    if child is not None:
        settle_run(builder, call, child)
    return call


def run_transcript(response: Mapping[str, Any], source_name: str) -> Transcript:
    """An agent executor's response as the transcript of its sub-agent."""
    child = Transcript(metadata={"source_format": NAME})
    builder = AgentFrameworkBuilder(child, source_name)
    builder.response(response, 1)
    builder.settle_open(())  # the approvals it ended waiting for
    return child


def settle_run(builder: AgentFrameworkBuilder, call: ToolCall, child: Transcript) -> None:
    """An agent executor finished: its call holds the agent's run and ends in its answer."""
    texts = [e.text for e in child.entries if isinstance(e, AssistantText)]
    assert call.subagent is not None
    agent = child.metadata.get("agent")
    sub = dataclasses.replace(
        call.subagent,
        name=agent if isinstance(agent, str) else call.subagent.name,
        transcript=child,
        tool_count=len(child.tool_calls()),
    )
    builder.update(
        call,
        status="success",
        subagent=sub,
        result=text_result(texts[-1]) if texts else None,
    )


class WorkflowReader:
    """Reads a workflow's records (:func:`plain`'s ``events``) one at a time, loaded or live."""

    def __init__(self, builder: AgentFrameworkBuilder) -> None:
        self.builder = builder
        self.prompted = False
        #: The call of each executor's run still going, by executor id.
        self.running: dict[str, ToolCall] = {}
        self.runs = 0

    def record(self, record: Mapping[str, Any], line: int) -> str:
        """Show one record; its type, for the load's accounting."""
        kind = record.get("type")
        builder = self.builder
        executor = record.get("executor_id")
        executor = executor if isinstance(executor, str) else "executor"
        if kind == "prompt":
            self.prompted = True
            builder._user(as_list(record.get("contents")), line)
        elif kind == "agent_run":
            response = record.get("response")
            child = (
                run_transcript(response, builder.source_name)
                if isinstance(response, Mapping)
                else None
            )
            call = self.running.pop(executor, None)
            if call is None:
                self.runs += 1
                call = _agent_run_call(builder, executor, self.runs, child)
            elif child is not None:
                settle_run(builder, call, child)
            if child is None:
                self.running[executor] = call
        elif kind == "handoff_sent":
            said = {"source": str(record.get("source")), "target": str(record.get("target"))}
            builder.transcript.append(
                worded_notice("reader.handed_off.by", said, subtype="handoff")
            )
        elif kind == "request_info":
            action = builder.wait_on_user(None, "question", str(record.get("text")))
            builder.transcript.append(action)
        elif kind == "executor_failed":
            message = f"{executor} failed: {record.get('message')}"
            call = self.running.pop(executor, None)
            if call is not None:
                builder.update(call, status="error", result=text_result(message))
            else:
                said = {"executor": str(executor), "said": str(record.get("message"))}
                builder.transcript.append(failure("reader.executor_failed", said))
        elif kind == "failed":
            said = {"said": str(record.get("message"))}
            builder.transcript.append(failure("reader.workflow_failed", said))
        elif kind == "output":
            author = record.get("author")
            meta = {"author": author} if isinstance(author, str) else {}
            builder.transcript.append(AssistantText(text=str(record.get("text")), meta=meta))
        elif kind == "plan":
            subtype = "replan" if record.get("replanned") else "plan"
            builder.transcript.append(SystemNotice(text=str(record.get("text")), subtype=subtype))
        elif kind == "speaker":
            builder.transcript.append(SystemNotice(text=str(record.get("text")), subtype="speaker"))
        else:
            builder.warn(f"workflow record of type {kind!r} not shown", line)
            return "other"
        return str(kind)

    def close(self) -> None:
        self.builder.settle_open(self.running.values())


def _error_details(details: Any) -> str:
    kind = getattr(details, "error_type", None)
    message = getattr(details, "message", None)
    return f"{kind}: {message}" if kind else str(message)


def _find_responses(value: Any) -> list[Any]:
    """The ``AgentResponse``s an event's data holds: itself, an ``AgentExecutorResponse``'s
    ``agent_response``, or either in a list (what an executor sent and yielded)."""
    items = value if isinstance(value, list) else [value]
    found = []
    for item in items:
        response = getattr(item, "agent_response", None)
        item = response if response is not None else item
        if type(item).__name__ in ("AgentResponse", "ChatResponse") and hasattr(item, "messages"):
            found.append(item)
    return found


def _prompt_contents(data: Any) -> list[Any] | None:
    """The input the workflow was started with: a text, a message or messages (the user's)."""
    if isinstance(data, str):
        return [{"type": "text", "text": data}]
    messages = data if isinstance(data, list) else [data]
    contents: list[Any] = []
    for message in messages:
        if getattr(message, "role", None) == "user" and hasattr(message, "to_dict"):
            contents.extend(message.to_dict().get("contents") or [])
    return contents or None


class WorkflowFold:
    """Turns a workflow's events into the records :class:`WorkflowReader` reads, one event at a
    time: what a load and a follower share. An executor's run is announced (``agent_run``
    without its response) at its first streamed update, and given its response when the
    executor completes; one met whole (an ``output`` event) is one record."""

    def __init__(self) -> None:
        self.prompted = False
        #: Per executor, the streamed updates of its run going on.
        self.updates: dict[str, list[Any]] = {}
        self.seen: set[int] = set()
        #: Executors whose ``output`` events gave their run's response in this invocation.
        self.answered: set[str] = set()
        self._keep: list[Any] = []  # the responses seen, so their ids are never reused
        #: The participant a magentic progress ledger just named (its request is not shown
        #: again).
        self.announced: str | None = None

    def event(self, event: Any) -> list[dict[str, Any]]:
        kind = getattr(event, "type", None)
        executor = getattr(event, "executor_id", None)
        data = getattr(event, "data", None)
        if kind == "executor_invoked" and not self.prompted:
            contents = _prompt_contents(data)
            if contents is not None:
                self.prompted = True
                return [{"type": "prompt", "contents": contents}]
            return []
        if kind == "output" and type(data).__name__ == "AgentResponseUpdate":
            updates = self.updates.setdefault(str(executor), [])
            updates.append(data)
            return [{"type": "agent_run", "executor_id": executor}] if len(updates) == 1 else []
        if kind == "executor_invoked":
            self.answered.discard(str(executor))
            return []
        if kind == "output":
            responses = _find_responses(data)
            if responses and all(_several_authors(r) for r in responses):
                # Not one agent's run: what an aggregator or orchestrator gathered from the
                # agents (ConcurrentBuilder's default output), each answer again.
                return [
                    {"type": "output", "executor_id": executor, "text": m.text,
                     "author": m.author_name}
                    for r in responses for m in r.messages if m.text
                ]  # fmt: skip
            records = [self._run(str(executor), response) for response in responses]
            if records:
                self.answered.add(str(executor))
            elif isinstance(data, str):
                records.append({"type": "output", "executor_id": executor, "text": data})
            return [r for r in records if r is not None]
        if kind == "executor_completed":
            # What an agent executor sent on (an ``AgentExecutorResponse``) and yielded hold
            # the same run: one record of it, unless its output events gave it already.
            responses = [r for r in _find_responses(data) if not _several_authors(r)][:1]
            if str(executor) in self.answered:
                self.answered.discard(str(executor))
                responses = []
            updates = self.updates.pop(str(executor), [])
            if updates and not responses:
                from agent_framework import AgentResponse

                responses = [AgentResponse.from_updates(updates)]
            records = [self._run(str(executor), response) for response in responses]
            return [r for r in records if r is not None]
        if kind == "handoff_sent":
            return [{"type": "handoff_sent", "source": getattr(data, "source", None),
                     "target": getattr(data, "target", None)}]  # fmt: skip
        if kind == "group_chat":
            # The orchestrator asks a participant to speak (``GroupChatRequestSentEvent``); its
            # answer (``GroupChatResponseReceivedEvent``) is that agent's run, shown by it.
            name = getattr(data, "participant_name", None)
            announced, self.announced = self.announced, None
            if type(data).__name__ != "GroupChatRequestSentEvent" or name is None:
                return []
            if name == announced:
                return []  # a magentic progress ledger named it, with its instruction
            return [{"type": "speaker", "text": f"Next speaker: {name}"}]
        if kind == "magentic_orchestrator":
            ledger = _magentic_records(data)
            self.announced = next((r["speaker"] for r in ledger if r.get("speaker")), None)
            return ledger
        if kind == "request_info":
            return [{"type": "request_info", "text": _request_text(event, data)}]
        if kind in ("executor_failed", "failed"):
            details = getattr(event, "details", None) or data
            return [{"type": kind, "executor_id": executor, "message": _error_details(details)}]
        return []

    def _run(self, executor: str, response: Any) -> dict[str, Any] | None:
        if id(response) in self.seen:
            return None
        self.seen.add(id(response))
        self._keep.append(response)
        return {"type": "agent_run", "executor_id": executor, "response": response_record(response)}


def _several_authors(response: Any) -> bool:
    return len({m.author_name for m in response.messages if m.author_name}) > 1


def _magentic_records(data: Any) -> list[dict[str, Any]]:
    """A magentic manager's plan (``plan_created``, ``replanned``: the task ledger) and each
    progress ledger (who speaks next and the instruction it is given, or that the task is done)."""
    kind = str(getattr(getattr(data, "event_type", None), "value", ""))
    content = getattr(data, "content", None)
    if kind in ("plan_created", "replanned"):
        text = getattr(content, "text", None)
        return [{"type": "plan", "text": text if isinstance(text, str) else str(content),
                 "replanned": kind == "replanned"}]  # fmt: skip

    def answer(item: str) -> Any:
        return getattr(getattr(content, item, None), "answer", None)

    if kind == "progress_ledger_updated":
        if answer("is_request_satisfied") is True:
            reason = getattr(getattr(content, "is_request_satisfied", None), "reason", None)
            return [{"type": "speaker", "text": f"The task is done: {reason}"}]
        speaker = answer("next_speaker")
        text = f"Next speaker: {speaker}: {answer('instruction_or_question')}"
        return [{"type": "speaker", "text": text, "speaker": speaker}]
    return [{"type": "other", "event": f"magentic_orchestrator {kind}"}]


def _request_text(event: Any, data: Any) -> str:
    response = getattr(data, "agent_response", None)
    if response is not None:  # HandoffAgentUserRequest: the agent waits for the user's reply
        author = next((m.author_name for m in response.messages if m.author_name), None)
        return f"{author or 'The agent'} waits for the user's reply"
    source = getattr(event, "source_executor_id", None)
    return f"{source or 'An executor'} asks: {type(data).__name__}"


# --- objects (plain) --------------------------------------------------------------------------


def _model_of(response: Any) -> str | None:
    """The model id a response holds only in its ``raw_representation``: the last
    ``ChatResponse`` (a run), or the updates it was merged from (a stream), whose ``model``
    (an agent's update's raw representation is its chat client's update) names it."""
    model = getattr(response, "model", None)
    if isinstance(model, str) and model:
        return model
    raw = getattr(response, "raw_representation", None)
    for item in reversed(raw) if isinstance(raw, list) else [raw]:
        for candidate in (item, getattr(item, "raw_representation", None)):
            model = getattr(candidate, "model", None)
            if isinstance(model, str) and model:
                return model
    return None


def response_record(response: Any) -> dict[str, Any]:
    """An ``AgentResponse`` as the framework serializes it, with its model id."""
    record: dict[str, Any] = response.to_dict()
    model = _model_of(response)
    if model is not None:
        record.setdefault("model", model)
    return record


def _is_workflow_result(value: Any) -> bool:
    return (
        isinstance(value, list)
        and hasattr(value, "get_outputs")
        and hasattr(value, "status_timeline")
    )


def workflow_record(events: Iterable[Any]) -> dict[str, Any]:
    """A workflow run's events as the records of the run (:class:`WorkflowFold`)."""
    fold = WorkflowFold()
    records: list[dict[str, Any]] = []
    open_runs: dict[str, dict[str, Any]] = {}
    for event in events:
        for record in fold.event(event):
            executor = str(record.get("executor_id"))
            if record["type"] == "agent_run" and "response" not in record:
                open_runs[executor] = record
                records.append(record)
            elif record["type"] == "agent_run" and executor in open_runs:
                open_runs.pop(executor)["response"] = record["response"]
            else:
                records.append(record)
    return {"type": WORKFLOW_TYPE, "events": records}


def plain(value: Any) -> Any:
    """The framework's object as its own JSON form (``to_dict()``): an ``AgentResponse`` with
    its model id, a ``Message``, an ``AgentSession``; a workflow run as its records."""
    if _is_workflow_result(value):
        return workflow_record(value)
    if isinstance(value, (list, tuple)):
        if value and all(type(v).__name__ == "AgentResponseUpdate" for v in value):
            # A stream's updates, merged as the framework merges them.
            from agent_framework import AgentResponse

            return response_record(AgentResponse.from_updates(list(value)))
        return plain_each(value, plain)
    if hasattr(value, "messages") and hasattr(value, "usage_details") and hasattr(value, "to_dict"):
        return response_record(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and (hasattr(value, "contents") or hasattr(value, "session_id")):
        return to_dict()
    if isinstance(value, Mapping):
        return dict(value)
    return {"(object)": type(value).__qualname__}


# --- agents used as tools ---------------------------------------------------------------------


def agent_tools(agent: Any) -> dict[str, str | None]:
    """The tools of ``agent`` that are agents (``as_tool()``), tool name → agent name: a tool
    whose function closes over an agent. Empty for no agent."""
    if agent is None:
        return {}
    options = getattr(agent, "default_options", None)
    tools = options.get("tools") if isinstance(options, Mapping) else None
    found: dict[str, str | None] = {}
    for tool in tools if isinstance(tools, list) else ():
        name, function = getattr(tool, "name", None), getattr(tool, "func", None)
        if not isinstance(name, str) or not inspect.isfunction(function):
            continue
        cells = function.__closure__ or ()
        for cell in cells:
            try:
                held = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if type(held).__module__.startswith("agent_framework") and hasattr(held, "as_tool"):
                child = getattr(held, "name", None)
                found[name] = child if isinstance(child, str) else None
                break
    return found


# --- reading ----------------------------------------------------------------------------------


def _message_type(record: Any) -> str:
    role = record.get("role") if isinstance(record, Mapping) else None
    if role == "assistant" and summarized_ids(record) is not None:
        return "message/summary"
    return f"message/{role}" if role in ROLES else type_of_record(record)


def read(source: Source, *, agent: Any = None) -> Transcript:
    """The response, messages, session or workflow of ``source``, each record accounted for."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = AgentFrameworkBuilder(transcript, source.name, agent_tools=agent_tools(agent))
    document = source.document if source.is_document else None
    kind = document.get("type") if isinstance(document, Mapping) else None
    if isinstance(document, Mapping) and "(object)" in document:
        raise TranscriptFormatError(
            source.name, [NAME], None,
            f"an agent-framework {document['(object)']} holds no run: load its AgentResponse, "
            "its session (AgentSession), or a workflow's run result",
        )  # fmt: skip
    if kind in RESPONSE_TYPES:
        assert isinstance(document, Mapping)
        builder.response(document, 1)
        source.note(str(kind), "warned" if transcript.warnings else "mapped")
    elif kind == WORKFLOW_TYPE:
        assert isinstance(document, Mapping)
        reader = WorkflowReader(builder)
        for line, record in enumerate(as_list(document.get("events")), start=1):
            before = warning_count(transcript.warnings)
            record_type = reader.record(record, line) if isinstance(record, Mapping) else "other"
            source.note(
                f"workflow/{record_type}",
                "warned" if warning_count(transcript.warnings) > before else "mapped",
            )
        reader.close()
        builder.recognized += 1
    elif kind == SESSION_TYPE:
        assert isinstance(document, Mapping)
        for line, message in enumerate(session_messages(document), start=1):
            builder.feed_noted(source, message, line, "session/message")
        builder.recognized += 1
    else:
        builder.feed_records(source, _message_type)
    builder.settle_open(builder._calls.values())
    if builder.recognized == 0:
        raise TranscriptFormatError(
            source.name, [NAME], None, "no agent-framework message (role, typed contents)"
        )
    return transcript


# --- live (spec A-2) --------------------------------------------------------------------------


class _Stream:
    """One agent's stream of ``AgentResponseUpdate``s, grouped into messages as
    ``AgentResponse.from_updates`` groups them (a new message when the id, author or role
    changes), each content shown as it arrives."""

    def __init__(self, builder: AgentFrameworkBuilder) -> None:
        self.builder = builder
        self.role: str | None = None
        self.message_id: str | None = None
        self.author: str | None = None
        self.open = False  # a message has been begun
        self.counted = False  # the message begun has shown a content (it is numbered)
        self.entries: list[list[Entry]] = []
        self.last: Entry | None = None
        self.parts: list[str] = []
        self.arguments: dict[str, list[str]] = {}
        self.usage: dict[str, int] | None = None
        self.model: str | None = None
        self.created_at: Any = None
        self.response_id: str | None = None
        self.finish_reason: Any = None
        self.user_parts: list[Any] = []

    def update(self, update: Any) -> None:
        role, message_id, author = update.role, update.message_id, update.author_name
        if (
            not self.open
            or (message_id and self.message_id and self.message_id != message_id)
            or (author and self.author and self.author != author)
            or (role and self.role != role)
        ):
            self._end_block()
            self.open, self.counted = True, False
            self.role, self.message_id, self.author = "assistant", None, None
        if getattr(update, "merge_mode", None) == "replace":
            self.builder.warn_once("an update replacing its message's contents is shown added")
        self.author = author if author is not None else self.author
        self.role = role if role is not None else self.role
        self.message_id = message_id or self.message_id
        for content in update.contents:
            self._content(content)
        raw = update.raw_representation
        model = getattr(raw, "model", None)
        if isinstance(model, str) and model:
            self.model = model
        if update.response_id:
            self.response_id = update.response_id
        if update.created_at is not None:
            self.created_at = update.created_at
        if update.finish_reason is not None:
            self.finish_reason = update.finish_reason

    def _begin_message(self) -> None:
        if self.counted:
            return
        self.counted = True
        builder = self.builder
        builder.messages += 1
        if self.role == "assistant":
            self.entries.append([])
            if self.author:
                builder.transcript.metadata.setdefault("agent", self.author)

    def _content(self, content: Any) -> None:
        kind = content.type
        if kind == "usage":
            # Added up as ``add_usage_details`` adds them (counts that are not ints skipped), or
            # replacing the total, as ``AgentResponse.from_updates`` does.
            details = content.usage_details or {}
            if content.merge_mode == "replace" or self.usage is None:
                self.usage = {}
            for key, value in details.items():
                if type(value) is int:
                    self.usage[key] = self.usage.get(key, 0) + value
            return
        self._begin_message()
        if self.role == "user":
            self.builder._user([content.to_dict()], self.builder.messages)
            return
        if kind in ("text", "text_reasoning") and self._grow(kind, content):
            return
        if kind == "function_call" and self._grow_call(content):
            return
        self._end_block()
        entry = self.builder.content(content.to_dict(), self.builder.messages)
        if entry is not None and self.role == "assistant":
            self.entries[-1].append(entry)
        self.last = entry
        if kind in ("text", "text_reasoning"):
            self.parts = [content.text or ""]
        if isinstance(entry, ToolCall) and isinstance(content.arguments, str):
            self.arguments[entry.call_id] = [content.arguments]
            self.builder.update(entry, args=content.arguments)

    def _grow(self, kind: str, content: Any) -> bool:
        last = self.last
        wanted = AssistantText if kind == "text" else Thinking
        if type(last) is not wanted or last is None:
            return False
        self.parts.append(content.text or "")
        self.builder.update(last, text="".join(self.parts))
        return True

    def _grow_call(self, content: Any) -> bool:
        """A streamed piece of a call's arguments (its ``call_id`` again, or none)."""
        call_id = content.call_id or (
            self.last.call_id if isinstance(self.last, ToolCall) else None
        )
        pieces = self.arguments.get(call_id) if call_id else None
        if pieces is None or not isinstance(content.arguments, str):
            return False
        pieces.append(content.arguments)
        call = self.builder._calls[str(call_id)]
        self.builder.update(call, args="".join(pieces))
        return True

    def _end_block(self) -> None:
        """The arguments streamed as JSON pieces, parsed once their call is written."""
        for call_id in list(self.arguments):
            call = self.builder._calls.get(call_id)
            pieces = self.arguments.pop(call_id)
            if call is not None:
                args = parse_arguments("".join(pieces))
                self.builder.update(call, args=args, description=describe_args(call.name, args))
        self.last = None

    def close(self) -> None:
        self._end_block()
        model = self.model
        if model is not None:
            for entries in self.entries:
                for entry in entries:
                    if isinstance(entry, AssistantText):
                        self.builder.update(entry, model=model)
        self.builder.finish(
            [e for e in self.entries if e],
            model=model,
            usage=self.usage,
            created_at=self.created_at,
            response_id=self.response_id,
            finish_reason=self.finish_reason,
        )


class Follower:
    """Maps ``agent.run(..., stream=True)`` updates, or a workflow's events, into
    ``transcript`` as they arrive (spec A-2)."""

    def __init__(self, transcript: Transcript, *, agent: Any = None) -> None:
        self.transcript = transcript
        transcript.metadata.setdefault("source_format", NAME)
        self.builder = AgentFrameworkBuilder(
            transcript, "<stream>", live=True, agent_tools=agent_tools(agent)
        )
        self.stream: _Stream | None = None
        self.fold: WorkflowFold | None = None
        self.reader: WorkflowReader | None = None
        #: Per executor, the live run of its agent while its updates stream.
        self.children: dict[str, tuple[ToolCall, Follower]] = {}
        self.line = 0

    def feed(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "AgentResponseUpdate":
            if self.stream is None:
                self.stream = _Stream(self.builder)
            self.stream.update(event)
        elif kind == "WorkflowEvent":
            self._workflow(event)
        else:
            self.builder.warn_once(f"event of type {kind} not shown")

    def _workflow(self, event: Any) -> None:
        if self.fold is None:
            self.fold, self.reader = WorkflowFold(), WorkflowReader(self.builder)
        assert self.reader is not None
        data = getattr(event, "data", None)
        executor = str(getattr(event, "executor_id", None))
        for record in self.fold.event(event):
            self.line += 1
            self.reader.record(record, self.line)
            if record["type"] == "agent_run" and "response" not in record:
                call = self.reader.running[executor]
                child = Follower(Transcript())
                self.children[executor] = (call, child)
                assert call.subagent is not None
                sub = dataclasses.replace(call.subagent, transcript=child.transcript)
                self.builder.update(call, subagent=sub)
            elif record["type"] == "agent_run":
                self.children.pop(executor, None)
        if (
            getattr(event, "type", None) == "output"
            and type(data).__name__ == "AgentResponseUpdate"
        ):
            live = self.children.get(executor)
            if live is not None:
                call, child = live
                child.feed(data)
                self.builder.update(call, subagent=call.subagent)  # the child grew

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        for _, child in self.children.values():
            child.close()
        if self.reader is not None:
            self.reader.close()
        self.builder.settle_open(self.builder._calls.values())


RECORDS = Records(
    mapped={
        "agent_response": "an AgentResponse: its messages, then its usage_details on the last "
        "text, created_at on its last message, response_id / finish_reason / model in metadata",
        "chat_response": "a ChatResponse, read as an AgentResponse (its model named)",
        "message/user": "UserMessage (text, data: images, other media as attachment lines)",
        "message/assistant": "text, text_reasoning, function_call (one batch), error and "
        "approval requests in order",
        "message/tool": "function_result settling its call: exception → error, else success",
        "message/system": 'metadata["system"]',
        "message/summary": "a compaction's summary (_summary_of_message_ids): CompactionBoundary "
        "of its text, before the first prompt after the messages it names; the messages left "
        'out of the context (_excluded) shown where they were, meta["excluded"] their reason',
        "session/message": "the messages of each history provider of an AgentSession",
        "workflow/prompt": "the workflow's input: UserMessage",
        "workflow/agent_run": "an agent executor's run: a ToolCall named by the executor, its "
        "SubAgent the agent's response",
        "workflow/handoff_sent": "a notice (subtype handoff)",
        "workflow/request_info": "a PendingAction question (the workflow waits)",
        "workflow/executor_failed": "the executor's call an error (else an AssistantError)",
        "workflow/failed": "AssistantError",
        "workflow/output": "a non-agent executor's text output, or each answer of an output "
        "gathered from several agents (a concurrent workflow's): AssistantText",
        "workflow/plan": "a magentic manager's plan (task ledger): a notice (subtype plan, replan)",
        "workflow/speaker": "a group chat's next speaker, a magentic progress ledger's next "
        "speaker and instruction (or that the task is done): a notice (subtype speaker)",
    },
    ignored={
        "workflow/other": "workflow records of other types (warned)",
    },
)
