"""LlamaIndex agents (``llama_index.core.agent.workflow``: ``FunctionAgent``, ``ReActAgent``,
``CodeActAgent``, ``AgentWorkflow``) after the run and live (spec A-1, A-2, A-3; issue 22).

An agent's run leaves its history in the workflow context's memory, a list of ``ChatMessage``
(``await (await handler.ctx.store.get("memory")).aget_all()``), and returns an ``AgentOutput``:
the last response and every tool call of the run as ``ToolCallResult`` (``tool_output.is_error``).
Their saved form is ``ChatMessage.model_dump()`` / ``model_dump_json()``:
``{"role", "additional_kwargs", "blocks": [{"block_type": ...}]}``.

Input shapes:

- a list of ``ChatMessage`` (or their ``model_dump()``, a JSON document or one a line), or one;
  the older dump ``{"role", "content", "additional_kwargs"}`` too;
- an ``AgentOutput`` (or its ``model_dump()``): it holds only the last response and the run's
  calls, so it reads as those calls with their results, the response, and a notice that the
  run's other steps are not in it;
- objects, by their type (:func:`plain`): a memory (``ChatMemoryBuffer``, ``Memory``: its
  ``get_all()``), a workflow ``Context`` (its memory, read from the committed state without
  running the loop) and the run's ``WorkflowHandler`` once awaited (its context's memory, and the
  ``AgentOutput`` of its ``StopEvent`` for the calls' outcomes: each ``ToolCallResult``'s
  ``tool_id`` and ``is_error``), as
  ``{"messages": [...], "llamaindex_run": {"tool_calls": [...], "agent": ...}}``. A run that
  did not finish (it failed, was cancelled, or still runs) left its steps in the context's
  ``scratchpad`` (the agent's ``finalize`` moves them into the memory): they follow the
  memory's messages; how a handler's run ended without its answer (its ``WorkflowFailedEvent``
  or the exception it raised, a timeout, a cancellation) is its run's ``error`` or
  ``stopped``, the last entry: an :class:`AssistantError` or an :class:`AbortMarker`.

The ``ChatMessage`` objects themselves stay in what :func:`plain` gives, never modified or
shared, and are read in place (issue 22): a finished run of one agent is read flat
(:func:`_read_flat`: its blocks' own fields, each call made already settled by its result, every
entry appended at once); any other (a handoff, an image, a result before its call…) is read by
the builder message by message from each message's dump, and both give the same transcript.

Mapping:

- ``user`` → :class:`UserMessage` (text blocks, images); ``system`` → ``metadata["system"]``;
- ``assistant`` blocks in order: ``text`` → :class:`AssistantText`, ``thinking`` →
  :class:`Thinking`, ``tool_call`` (``ToolCallBlock``) → :class:`ToolCall` (``tool_call_id``
  verbatim, ``tool_kwargs`` as args); the older ``additional_kwargs["tool_calls"]`` (OpenAI's
  function calls) likewise. The calls of one message form one batch, ``msg-<position>``;
- ``tool`` (``additional_kwargs["tool_call_id"]``) settles its call with the text of its blocks;
- token counts a message's ``additional_kwargs`` holds (``prompt_tokens`` /
  ``completion_tokens``, or ``input_tokens`` / ``output_tokens``) are its :class:`Usage`;
- an agent's ``structured_response`` (``output_cls`` or ``structured_output_fn``: made by a
  last call to the model after the text answer, which the memory does not keep; in the
  ``AgentOutput``, a handler's too) → ``metadata["structured_response"]`` and the turn's
  answer (P-2): an :class:`AssistantText` of it as a fenced JSON block
  (``meta["structured_output"]``), unless a text after the last call states it.

What the objects do not record: **a tool message has no error flag** (a failing function's
message is its exception's text, as a success's is its value), so a call's status comes from
``ToolCallResult.tool_output.is_error`` where an ``AgentOutput`` (a handler's, or the events')
holds it; without it a call with a result is ``unknown`` (spec L-3), except the framework's own
error texts (``Tool <name> not found…``, a handoff to an agent that is not there), which are
``error``, and its handoff's own text when the agent took over (``Agent <name> is now
handling the request…``), ``success``. The memory keeps no timestamps, no durations, no model
name and no usage (``ChatResponse.raw``, where the provider's usage and model are, is not kept
in it); the system prompt is the agent's, not the memory's: a handler's is read from the
workflow it ran (its root agent's), a live run's from its first ``AgentInput``.

Calls written as text (``ReActAgent``, ``CodeActAgent``): their model writes its calls in its
text, the agent parses them (``AgentOutput.tool_calls`` with ids of its own, uuids) and the
memory keeps text. A ``ReActAgent`` keeps its whole reasoning as one assistant message once the
run answers (``BaseReasoningStep.get_content()`` of each step: ``Thought:``, ``Action:``,
``Action Input:`` as a dict's ``repr``, ``Observation:``, ``Answer:``, at lines' starts): each
thought is a :class:`Thinking` (not the framework's ``(Implicit)`` one), each action a
:class:`ToolCall` settled by the observation after it, the answer an :class:`AssistantText`;
a ``CodeActAgent``'s reply holds ``<execute>`` code: its text around the code, then an
``execute`` call of the code (``{"code": ...}``, as the agent calls its ``code_execute_fn``),
settled by the next user message when it is the agent's ``Result of executing the code
given:``. Such a call takes the id and ``is_error`` of the run's ``ToolCallResult`` of the same
tool name and result text where a handler's ``AgentOutput`` has it; without one (the memory
alone) its id is made of its batch (``msg-<line>-<tool>``) and its status is ``unknown``. The
memory does not keep a reply the ReAct parser refused (the agent asks the model again with
``retry_messages``), nor, for an agent handing off to a ReAct agent, which agent wrote which
step but for the handoffs (ReAct agents share one scratchpad); a thought streamed only as
``AgentStream`` text is all a late reader has once the run cut its answer's text.

Handoffs (``AgentWorkflow``): a ``handoff`` call (``to_agent``, ``reason``) is a
:class:`ToolCall` with a :class:`SubAgent` naming the agent; its result gives that agent
control, and its steps nest in the call's sub-agent transcript (a handoff back to an agent
above returns there), as the Agents SDK's handoffs are shown; the run's last answer moves to
the top (rule A-1.2). The memory does not name which agent wrote a message: the handoffs say it.

Live (A-2): ``handler.stream_events()`` (async). ``AgentInput`` gives the prompt (its first
one: the history before the run and the user's message; its system message is
``metadata["system"]``: a ReAct or CodeAct agent's own one out of the default prompt it
composes), ``AgentStream`` grows the text (``delta``: a ReAct reasoning's as a Thinking, a
CodeAct reply's without its code) and the thinking (``thinking_delta``) being written,
``AgentOutput`` settles that response in place (its ``tool_calls`` give the ids of calls written
as text), ``ToolCall`` marks its call running, ``ToolCallResult`` settles it with ``is_error``;
``StopEvent`` ends the run (a ``return_direct`` tool's answer, which no ``AgentOutput`` event
carries, is taken from it; so is the structured response, which ``AgentStreamStructuredOutput``
streams); ``WorkflowFailedEvent`` (max iterations reached, a step that
raised) and ``WorkflowTimedOutEvent`` end it with an :class:`AssistantError`,
``WorkflowCancelledEvent`` with an :class:`AbortMarker`, as a load of the handler does. An
``AgentOutput`` with ``retry_messages`` (a ReAct reply the
parser refused) stays as streamed with a warning notice: the only thing a live view shows that
``load()`` of the run cannot, as the memory does not keep it. ``AgentSetup`` and the
workflow's bookkeeping events show nothing; any other kind of event is said in a warning, once.
At the end the transcript is what ``load(handler)`` gives.
"""

from __future__ import annotations

import dataclasses
import re
import string
import warnings
from collections.abc import Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    MessageBuilder,
    NameSet,
    as_list,
    counted_usage,
    describe_args,
    parse_arguments,
    plain_output,
    stringify,
    structured_answer,
    text_result,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.openai_chat import _literal
from turnfold.formats.protocol import not_read
from turnfold.formats.source import (
    Source,
    model_fields,
    plain_each,
    plain_value,
    type_of_record,
)
from turnfold.formats.wording import notice
from turnfold.formats.wrappers import listed_evidence
from turnfold.model import (
    AbortMarker,
    AssistantError,
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
    maker,
)
from turnfold.usage import attach_usage

NAME = "llamaindex"

#: The document key of :func:`plain`'s run description (a handler's, a context's).
RUN_KEY = "llamaindex_run"
#: The keys of an ``AgentOutput``'s dump.
_OUTPUT_KEYS = ("response", "current_agent_name")
#: Each role and what its message is to a run: the system prompt, the user's, the model's, or
#: a tool's result (the builder and the flat read both go by it); a ``MessageRole`` member is
#: equal to its name, and hashed as it is.
_ROLE_PARTS: dict[Any, str] = {
    "system": "system", "developer": "system", "user": "user", "tool": "tool", "function": "tool",
    "assistant": "assistant", "chatbot": "assistant", "model": "assistant",
}  # fmt: skip
_ROLES = NameSet(_ROLE_PARTS)
#: ``block_type`` values of ``llama_index.core.base.llms.types`` content blocks.
BLOCK_TYPES = NameSet(
    {"text", "image", "audio", "video", "document", "cache", "citable", "citation",
     "thinking", "tool_call"}
)  # fmt: skip
#: The tool an ``AgentWorkflow`` gives each agent to pass control (``multi_agent_workflow.py``).
HANDOFF = "handoff"


# --- detection --------------------------------------------------------------------------------


def _classify(message: Any) -> int:
    """A ``ChatMessage`` dump: a role and typed ``blocks`` (LlamaIndex's own mark), or the
    older ``content`` with ``additional_kwargs`` and no ``type`` (LangChain's has one)."""
    if not isinstance(message, MAPPINGS) or message.get("role") not in _ROLES:
        return NOT_MINE
    blocks = message.get("blocks")
    if isinstance(blocks, list):
        if all(isinstance(b, MAPPINGS) and b.get("block_type") in BLOCK_TYPES for b in blocks):
            return DISTINCTIVE
        return NOT_MINE
    if "additional_kwargs" in message and "type" not in message:
        return READABLE if isinstance(message["additional_kwargs"], MAPPINGS) else NOT_MINE
    return NOT_MINE


_LACKS = "no blocks with a block_type"


def detect(source: Source) -> Evidence:
    """``ChatMessage`` dumps (a list, one, or a run's messages), or an ``AgentOutput``'s."""
    listed = listed_evidence(source, _classify, _LACKS)
    if listed is not None:
        return listed
    document = source.document
    if not isinstance(document, MAPPINGS):
        return Evidence.none("no ChatMessage")
    if isinstance(document.get(RUN_KEY), Mapping):
        return Evidence(share=1.0, marks=2)
    if all(key in document for key in _OUTPUT_KEYS):
        verdict = _classify(document.get("response"))
        return Evidence(share=1.0, marks=2) if verdict else Evidence.none("no response message")
    return Evidence.of([document], _classify, _LACKS)


# --- the builder ------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Level:
    """One agent's part of the run: the root transcript, or the transcript of the handoff call
    (``host``, in ``parent``'s transcript) that gave this agent control."""

    agent: str | None
    transcript: Transcript
    host: ToolCall | None = None
    parent: _Level | None = None


def _text_of(blocks: Any) -> tuple[str, list[ImageData]]:
    texts: list[str] = []
    images: list[ImageData] = []
    for block in as_list(blocks):
        kind = block.get("block_type") if isinstance(block, MAPPINGS) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            data, url = block.get("image"), block.get("url")
            media = block.get("image_mimetype") or "image"
            if isinstance(data, str) and data:
                images.append(ImageData(media_type=str(media), data=data))
            elif isinstance(url, str) and url:
                texts.append(f"[image: {url}]")
        elif kind in ("document", "audio", "video"):
            texts.append(f"[attachment: {kind}]")
    return "\n".join(texts), images


def _usage(kwargs: Mapping[str, Any]) -> Usage | None:
    """The counts LlamaIndex's LLM integrations write into ``additional_kwargs``."""
    if "prompt_tokens" in kwargs or "completion_tokens" in kwargs:
        return counted_usage(kwargs.get("prompt_tokens"), kwargs.get("completion_tokens"))
    return counted_usage(kwargs.get("input_tokens"), kwargs.get("output_tokens"))


def _handoff_refused(call: ToolCall, text: str) -> bool:
    """The handoff tool's own refusals (``multi_agent_workflow.py``): no agent took over."""
    target = call.args.get("to_agent") if isinstance(call.args, MAPPINGS) else None
    return text.startswith(f"Agent {target} not found") or (
        text.startswith(f"Agent {target} cannot hand off to ")
    )


#: The entries a load makes one of per message, block and call, at a third of the cost of
#: calling their classes (:func:`~turnfold.model.maker`; issue 22).
_new_call = maker(ToolCall, "call_id", "name", "args", "description", "status", "batch_id")
_new_text = maker(AssistantText, "text")
_new_thinking = maker(Thinking, "text")
_new_user = maker(UserMessage, "text", "images")


def _written(kind: str, block: Mapping[str, Any]) -> AssistantText | Thinking | None:
    """A ``text`` or ``thinking`` block's entry; None for one with no text."""
    text = block.get("text") if kind == "text" else block.get("content")
    if not isinstance(text, str) or not text:
        return None
    return _new_text(text) if kind == "text" else _new_thinking(text)


def _user(blocks: Any) -> UserMessage | None:
    """A user message of its text blocks and images; None for one with neither."""
    text, images = _text_of(blocks)
    return _new_user(text, images) if text or images else None


def _handoff_taken(call: ToolCall, text: str) -> bool:
    """The handoff tool's own words when the agent took over (``DEFAULT_HANDOFF_OUTPUT_PROMPT``
    of ``agent/workflow/prompts.py``; a workflow's own ``handoff_output_prompt`` says no such
    thing, and leaves the outcome unknown)."""
    target = call.args.get("to_agent") if isinstance(call.args, MAPPINGS) else None
    return text.startswith(f"Agent {target} is now handling the request")


def _tool_call(call_id: str, name: str, args: Any, status: ToolStatus, batch: str) -> ToolCall:
    """A ``tool_call`` block's call (not yet in a transcript); a ``handoff`` names the agent
    it hands off to and why, as a :class:`SubAgent`."""
    call = _new_call(call_id, name, args, describe_args(name, args), status, batch)
    if name == HANDOFF:
        target = args.get("to_agent") if isinstance(args, MAPPINGS) else None
        reason = args.get("reason") if isinstance(args, MAPPINGS) else None
        call.subagent = SubAgent(
            name=target if isinstance(target, str) else None,
            task=reason if isinstance(reason, str) else None,
        )
    return call


def _outcome(call: ToolCall, text: str, failed: bool | None) -> ToolStatus:
    """A call's status by its result ``text`` and whether its tool failed (``failed``: the
    run's ``ToolCallResult.is_error``, None where no ``AgentOutput`` says)."""
    refused = call.name == HANDOFF and _handoff_refused(call, text)
    if failed is None:
        # No error flag in the message: only the framework's own texts tell.
        unfound = text.startswith(f"Tool {call.name} not found.")
        if refused or unfound:
            return "error"
        return "success" if call.name == HANDOFF and _handoff_taken(call, text) else "unknown"
    return "error" if failed or refused else "success"


# --- ReAct and CodeAct: calls written as text -----------------------------------------------

#: The labels a ``ReActAgent``'s reasoning is written in, each at a line's start: what the
#: model writes (``ReActOutputParser``) and what ``BaseReasoningStep.get_content()`` writes
#: into the memory when the run ends (the steps joined by line breaks).
_REACT_LABEL = re.compile(r"^(Thought|Action Input|Action|Observation|Answer):[ \t]*", re.M)
#: The thought ``ReActOutputParser`` gives a reply with no labels: the framework's, not the
#: model's, so no :class:`Thinking`.
_IMPLICIT = "(Implicit) I can answer without any more tools!"
#: A ``CodeActAgent``'s code to run (its ``_extract_code_from_response``), called ``execute``.
_CODE = re.compile(r"<execute>(.*?)</execute>", re.DOTALL)
EXECUTE = "execute"
#: How a ``CodeActAgent`` gives the model its code's output: a user message.
_CODE_RESULT = "Result of executing the code given:\n\n"
#: The Action Input of a memory's ReAct text is a dict's ``repr``: no longer one is parsed.
_MOST_ARGUMENTS = 64 * 1024


def react_steps(text: str) -> list[tuple[str, str]] | None:
    """A ReAct agent's text (from its first ``Thought:``) as its labelled parts in order;
    None for text of another form (no leading ``Thought:``, an ``Action:`` without its
    ``Action Input:``)."""
    if not text.lstrip().startswith("Thought:"):
        return None
    marks = list(_REACT_LABEL.finditer(text))
    parts = [
        (mark.group(1), text[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else None])
        for i, mark in enumerate(marks)
    ]
    for i, (label, _) in enumerate(parts):
        if label == "Action" and (i + 1 == len(parts) or parts[i + 1][0] != "Action Input"):
            return None
    return [(label, value.strip()) for label, value in parts]


def _react_arguments(text: str) -> Any:
    """An Action Input: JSON as the model writes it, a dict's ``repr`` as the memory keeps it;
    the text itself where neither."""
    if len(text) > _MOST_ARGUMENTS:
        return text
    value = _literal(text)
    return text if value is None else value


def written_code(text: str) -> tuple[str, str] | None:
    """A ``CodeActAgent`` reply's text around its ``<execute>`` blocks and their code (joined
    as the agent joins them); None for a reply with none."""
    if "<execute>" not in text:
        return None
    blocks = _CODE.findall(text)
    if not blocks:
        return None
    return _CODE.sub("", text).strip(), "\n\n".join(block.strip() for block in blocks)


def _shown_code_text(text: str) -> str:
    """Streamed CodeAct text as the reply's entry will show it: no code, even half written."""
    text = _CODE.sub("", text)
    start = text.find("<execute>")
    return text if start < 0 else text[:start]


def _written_form(blocks: list[Any], kwargs: Mapping[str, Any]) -> str | None:
    """An assistant message's text where its calls are written in it (ReAct, CodeAct): text
    blocks only and no calls of its own; None for any other."""
    if "tool_calls" in kwargs or not blocks:
        return None
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, MAPPINGS) or block.get("block_type") != "text":
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    text = "\n".join(texts)
    return text if react_steps(text) is not None or written_code(text) is not None else None


def _is_written_form(text: str) -> bool:
    """Whether the flat read leaves this text to the builder: ReAct or CodeAct text, or a
    CodeAct result (each a few characters' test: a finished run is read at speed)."""
    head = text[:64].lstrip()
    return head.startswith(("Thought:", _CODE_RESULT[:20])) or "<execute>" in text


@dataclasses.dataclass
class _RunCall:
    """One of a run's ``ToolCallResult`` objects whose id no message names (a ReAct or
    CodeAct call, written as text): matched to its call by tool name and result text."""

    call_id: str
    name: str
    text: str | None
    failed: bool


class LlamaBuilder(MessageBuilder):
    """Builds a transcript from ``ChatMessage`` dumps fed one at a time (static or live), each
    handoff's new agent nested under its call. ``outcomes`` maps a call id to whether its tool
    failed (``ToolOutput.is_error``), where the run's ``ToolCallResult`` objects say it."""

    def __init__(
        self, transcript: Transcript | None = None, source_name: str = "<messages>", *,
        live: bool = False,
    ) -> None:  # fmt: skip
        super().__init__(transcript, source_name, live=live)
        self.root = self.transcript
        self.level = self.top = _Level(agent=None, transcript=self.transcript)
        self.outcomes: dict[str, bool] = {}
        #: The run's calls no message names, for the calls written as text (ReAct, CodeAct).
        self.run_calls: list[_RunCall] = []
        #: Live: the calls of the reply being fed (its ``AgentOutput.tool_calls``: id, name,
        #: arguments), for the calls its text writes.
        self.next_calls: list[tuple[str, str, Any]] = []
        self.recognized = 0
        self._owners: dict[int, Transcript] = {}
        #: The ids made for calls written as text, until their results name the run's own.
        self._provisional: set[str] = set()
        #: A CodeAct call its result message (a user message, next) settles.
        self._code_call: ToolCall | None = None
        #: How many steps beyond its own line each ReAct text so far held: a live run feeds
        #: each step as a message of its own, so a batch is numbered as that message would be.
        self._shift = 0

    # --- writing at the right level ----------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        self.level.transcript.append(entry)
        self._owners[id(entry)] = self.level.transcript
        return entry

    def update(self, entry: Entry, **changes: Any) -> None:
        self._owners.get(id(entry), self.root).update(entry, **changes)
        self.touch(self._owners.get(id(entry)))

    def touch(self, transcript: Transcript | None) -> None:
        """Live only: a nested level changed (``transcript``), so each handoff call above the
        current level is updated, which tells the top transcript's observers (the widget)."""
        level: _Level | None = self.level
        while self.live and transcript is not self.root and level is not None:
            host, parent = level.host, level.parent
            if host is None or parent is None or host.subagent is None:
                return
            count = len(level.transcript.tool_calls())
            sub = dataclasses.replace(host.subagent, tool_count=count)
            self._owners.get(id(host), self.root).update(host, subagent=sub)
            level = parent

    # --- feeding ------------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        self.feed_message(message, line)

    def feed_message(self, message: Any, line: int, *, reuse: list[Entry] | None = None) -> None:
        """Add one message. ``reuse`` are entries a live view shows for it already (streamed
        text and thinking), written over in place rather than appended again."""
        if not isinstance(message, MAPPINGS):
            reason = message.reason if isinstance(message, MalformedLine) else "not a message"
            self.warn(reason, line)
            return
        role = message.get("role")
        if role not in _ROLES:
            self.warn(f"not a ChatMessage (role {role!r})", line)
            return
        self.recognized += 1
        kwargs = message.get("additional_kwargs")
        kwargs = kwargs if isinstance(kwargs, MAPPINGS) else {}
        blocks = message.get("blocks")
        if not isinstance(blocks, list):  # the older dump: content, tool calls in kwargs
            content = message.get("content")
            blocks = [{"block_type": "text", "text": content}] if isinstance(content, str) else []
        part = _ROLE_PARTS[role]
        if part == "system":
            text, _ = _text_of(blocks)
            if text:
                self.transcript.metadata["system"] = text
        elif part == "tool":
            self._settle(kwargs.get("tool_call_id"), blocks, line)
        elif part == "user":
            text, _ = _text_of(blocks)
            call = self._code_call
            if call is not None and call.result is None and text.startswith(_CODE_RESULT):
                self._code_call = None
                self._settle_text(call, text[len(_CODE_RESULT) :], line)
                return
            entry = _user(blocks)
            if entry is not None:
                self._append(entry)
        else:
            self._assistant(blocks, kwargs, line, reuse or [])

    def _assistant(
        self, blocks: list[Any], kwargs: Mapping[str, Any], line: int, reuse: list[Entry]
    ) -> None:
        batch = f"msg-{line + self._shift}"
        entries: list[Entry] = []
        written = _written_form(blocks, kwargs)
        if written is not None:
            blocks = []  # its calls are in its text: read by _written_calls
            entries = self._written_calls(written, line, reuse)
        for block in blocks:
            kind = block.get("block_type") if isinstance(block, MAPPINGS) else None
            entry: Entry | None = None
            if kind == "text" or kind == "thinking":
                entry = _written(kind, block)
            elif kind == "tool_call":
                entry = self._call(
                    block.get("tool_call_id"), block.get("tool_name"), block.get("tool_kwargs"),
                    batch, line,
                )  # fmt: skip
            elif kind in BLOCK_TYPES:
                text, _ = _text_of([block])
                entry = _new_text(text) if text else None
            else:
                self.warn_once(f"content block {kind!r} not shown", line)
            if entry is not None:
                entries.append(self._place(entry, reuse))
        for call in as_list(kwargs.get("tool_calls")):  # OpenAI's function calls, older dumps
            function = call.get("function") if isinstance(call, MAPPINGS) else None
            if isinstance(function, MAPPINGS):
                entry = self._call(
                    call.get("id"), function.get("name"), function.get("arguments"), batch, line
                )
                if entry is not None:
                    entries.append(self._append(entry))
        for left in reuse:  # streamed but not in the message: no longer being written
            if isinstance(left, Thinking) and left.streaming:
                self.update(left, streaming=False)
        attach_usage(entries, _usage(kwargs), self.level.transcript)

    def _written_calls(self, text: str, line: int, reuse: list[Entry]) -> list[Entry]:
        """A ReAct or CodeAct reply (``text``): its thoughts, text, calls, the results a
        ReAct text holds (``Observation:``) and its answer, in order."""
        entries: list[Entry] = []
        at = line + self._shift  # the line a live run feeds each step at
        steps = react_steps(text)
        if steps is None:  # CodeAct: the text around the code, then the code's call
            outside, code = written_code(text) or ("", "")
            if outside:
                entries.append(self._place(_new_text(outside), reuse))
            self._code_call = self._text_call(EXECUTE, {"code": code}, f"msg-{at}", line)
            if self._code_call is not None:
                entries.append(self._append(self._code_call))
            return entries
        call: ToolCall | None = None
        action: str | None = None
        observed = False
        for label, value in steps:
            if label == "Observation":
                at += 1
                observed = True
                if call is None or call.result is not None:
                    self.warn("a ReAct Observation with no Action before it", line)
                else:
                    self._settle_text(call, value, line)
                continue
            if observed:  # the next reply: a message of its own live
                at, observed = at + 1, False
            if label == "Thought" and value and value != _IMPLICIT:
                entries.append(self._place(_new_thinking(value), reuse))
            elif label == "Action":
                action = value
            elif label == "Action Input":
                name = action or "tool"
                call = self._text_call(name, _react_arguments(value), f"msg-{at}", line)
                if call is not None:
                    entries.append(self._append(call))
            elif label == "Answer" and value:
                entries.append(self._place(_new_text(value), reuse))
        self._shift = at - line
        return entries

    def _text_call(self, name: str, args: Any, batch: str, line: int) -> ToolCall | None:
        """A call written as text: its id and arguments those of the reply's own call (live),
        or an id made of its batch until its result finds the run's (:meth:`_settle_text`)."""
        for position, (call_id, called, kwargs) in enumerate(self.next_calls):
            if called == name:
                del self.next_calls[position]
                return self._call(call_id, name, kwargs, batch, line)
        call_id = f"{batch}-{name}"
        self._provisional.add(call_id)
        return self._call(call_id, name, args, batch, line)

    def _settle_text(self, call: ToolCall, text: str, line: int) -> None:
        """A call written as text settled by its result ``text``; a call whose id was made
        takes the id and ``is_error`` of the run's call of its name and result, where known."""
        if call.call_id in self._provisional:
            self._provisional.discard(call.call_id)
            for position, known in enumerate(self.run_calls):
                if known.name != call.name or known.text not in (None, text):
                    continue
                del self.run_calls[position]
                if known.call_id not in self._calls:
                    del self._calls[call.call_id]
                    self._calls[known.call_id] = call
                    self.update(call, call_id=known.call_id)
                    self.outcomes[known.call_id] = known.failed
                break
        self._settle(call.call_id, [{"block_type": "text", "text": text}], line)

    def _call(self, call_id: Any, name: Any, args: Any, batch: str, line: int) -> ToolCall | None:
        call_id = call_id if isinstance(call_id, str) else ""
        if not call_id:
            self.warn("tool call without an id", line)
        elif call_id in self._calls:
            self.warn(f"duplicate tool call id {call_id!r} skipped", line)
            return None
        name = name if isinstance(name, str) and name else "tool"
        call = _tool_call(call_id, name, parse_arguments(args), self.open_status, batch)
        if call_id:
            self._calls[call_id] = call
        return call

    def _place(self, entry: Entry, reuse: list[Entry]) -> Entry:
        """``entry`` appended, or written over the streamed entry of its kind that showed it."""
        if reuse and type(reuse[0]) is type(entry) and not isinstance(entry, ToolCall):
            target = reuse.pop(0)
            changes = {f.name: getattr(entry, f.name) for f in dataclasses.fields(entry)}
            del changes["id"]
            self.update(target, **changes)
            return target
        return self._append(entry)

    def _settle(self, call_id: Any, blocks: list[Any], line: int) -> None:
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"tool message for an unknown tool_call_id {call_id!r}", line)
            return
        text, images = _text_of(blocks)
        status = _outcome(call, text, self.outcomes.get(call.call_id))
        self.update(call, status=status, result=text_result(text or None, images=images))
        if call.name == HANDOFF and status != "error" and call.subagent is not None:
            self._hand_off(call)

    def _hand_off(self, call: ToolCall) -> None:
        """The handoff's agent takes control: its steps nest in the call's sub-agent, or go on
        where they were when it is an agent above (a handoff back)."""
        assert call.subagent is not None
        target = call.subagent.name
        level = self.level.parent
        while level is not None and level.agent != target:
            level = level.parent
        if level is not None:
            while self.level is not level:
                self._close_level()
            return
        child = Transcript()
        self.update(call, subagent=dataclasses.replace(call.subagent, transcript=child))
        self.level = _Level(agent=target, transcript=child, host=call, parent=self.level)
        self.transcript = child

    def _close_level(self) -> None:
        level, parent, host = self.level, self.level.parent, self.level.host
        assert parent is not None
        assert host is not None
        assert host.subagent is not None
        self.level, self.transcript = parent, parent.transcript
        summary = dataclasses.replace(
            host.subagent,
            transcript=level.transcript,
            tool_count=len(level.transcript.tool_calls()),
        )
        self._owners.get(id(host), self.root).update(host, subagent=summary)

    def finish(self) -> None:
        """The run ended: its last text, the answer, moves out of the handoffs' folds to the
        top, where the user reads it (rule A-1.2); every call still open has no outcome."""
        if self.level.parent is not None:
            deepest = self.level
            entries = deepest.transcript.entries
            last = entries[-1] if entries else None
            if isinstance(last, AssistantText):
                kept = Transcript(entries[:-1])  # transcripts only grow: made again without it
                for entry in kept.entries:
                    self._owners[id(entry)] = kept
                deepest.transcript = kept
            while self.level.parent is not None:
                self._close_level()
            if isinstance(last, AssistantText):
                last.id = ""  # a fresh id of the top transcript's
                self._append(last)
        self.settle_open(self._calls.values())


# --- reading ----------------------------------------------------------------------------------


def _outcomes(calls: Any) -> dict[str, bool]:
    """``ToolCallResult`` dumps (an ``AgentOutput``'s ``tool_calls`` as :func:`plain` keeps
    them) as call id → ``is_error``; a ``ToolSelection`` (a user's ``model_dump()``) says none."""
    out: dict[str, bool] = {}
    for call in as_list(calls):
        output = call.get("tool_output") if isinstance(call, MAPPINGS) else None
        failed = output.get("is_error") if isinstance(output, MAPPINGS) else None
        if isinstance(call, MAPPINGS) and isinstance(call.get("tool_id"), str):
            if isinstance(failed, bool):
                out[call["tool_id"]] = failed
            elif isinstance(output, MAPPINGS):
                out[call["tool_id"]] = False  # is_error left at its default (exclude_unset)
    return out


def _run_calls(calls: Any) -> list[_RunCall]:
    """The run's ``ToolCallResult`` dumps as :class:`_RunCall` (by :func:`_outcomes`' rule
    for ``is_error``), for the calls a ReAct or CodeAct text writes without their ids."""
    failed = _outcomes(calls)
    known = []
    for call in as_list(calls):
        call_id = call.get("tool_id") if isinstance(call, MAPPINGS) else None
        name = call.get("tool_name") if isinstance(call, MAPPINGS) else None
        if isinstance(call_id, str) and call_id in failed and isinstance(name, str):
            output = call.get("tool_output")
            text = output.get("content") if isinstance(output, MAPPINGS) else None
            known.append(_RunCall(call_id, name, text if isinstance(text, str) else None,
                                  failed[call_id]))  # fmt: skip
    return known


def _read_output(builder: LlamaBuilder, output: Mapping[str, Any]) -> None:
    """An ``AgentOutput`` alone: the run's calls with their results, then its response."""
    calls = as_list(output.get("tool_calls"))
    builder.outcomes.update(_outcomes(calls))
    builder.transcript.append(notice("reader.partial_agent_output", subtype="partial"))
    for position, call in enumerate(calls, start=1):
        if not isinstance(call, MAPPINGS):
            builder.warn("a tool call that is no object", None)
            continue
        entry = builder._call(
            call.get("tool_id"), call.get("tool_name"), call.get("tool_kwargs"),
            f"call-{position}", position,
        )  # fmt: skip
        if entry is None:
            continue
        builder._append(entry)
        output_of = call.get("tool_output")
        if isinstance(output_of, MAPPINGS):
            blocks = output_of.get("blocks")
            if not isinstance(blocks, list):
                content = output_of.get("content")
                blocks = [{"block_type": "text", "text": stringify(content)}]
            builder._settle(entry.call_id, blocks, position)
    builder.feed_message(output.get("response"), len(calls) + 1)
    agent = output.get("current_agent_name")
    if isinstance(agent, str) and agent:
        builder.transcript.metadata["agent"] = agent


def read(source: Source) -> Transcript:
    """The ``ChatMessage`` dumps of ``source`` (or an ``AgentOutput``'s), each accounted for;
    a run's own messages (:func:`plain` keeps them) read flat where :func:`_read_flat` can."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = LlamaBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    structured: Any = None
    if isinstance(document, MAPPINGS) and all(key in document for key in _OUTPUT_KEYS):
        _read_output(builder, document)
        structured = document.get("structured_response")
        source.mapped("agent_output")
    elif isinstance(document, MAPPINGS) and isinstance(document.get("messages"), list):
        run = document.get(RUN_KEY)
        run = run if isinstance(run, MAPPINGS) else {}
        builder.outcomes.update(_outcomes(run.get("tool_calls")))
        builder.run_calls = _run_calls(run.get("tool_calls"))
        if isinstance(run.get("agent"), str):
            transcript.metadata["agent"] = run["agent"]
            builder.level.agent = run["agent"]
        if isinstance(run.get("system"), str):
            transcript.metadata["system"] = run["system"]
        _read_messages(source, builder, document["messages"])
        _end_run(builder, run)
        structured = run.get("structured_response")
        for key in document:
            if key == RUN_KEY:
                source.mapped(key)
            elif key != "messages":
                source.ignored("other key")
    elif isinstance(document, list):
        _read_messages(source, builder, document)
    else:
        builder.feed_records(source, _record_type)
    builder.finish()
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], None, "no ChatMessage (role, blocks)")
    _structured(transcript, structured)
    return transcript


def _structured(transcript: Transcript, response: Any) -> None:
    """An agent's ``structured_response`` (``output_cls`` / ``structured_output_fn``): a last
    call to the model the memory does not keep makes it, after the agent's text answer, so it
    is the turn's answer (P-2), at the top level (after the handoffs' answer moved there)."""
    if response is not None:
        transcript.metadata["structured_response"] = response
        structured_answer(transcript, response)


def _read_messages(source: Source, builder: LlamaBuilder, messages: list[Any]) -> None:
    """A list of messages: the run's own, read flat, or else each fed to the builder as its
    record (a ``ChatMessage`` by its dump), each accounted for."""
    if _read_flat(source, builder, messages):
        return
    for line, message in enumerate(plain_each(messages, _record_of), start=1):
        try:
            builder.feed_noted(source, message, line, _record_type(message))
        except Exception as exc:  # a shape never seen: that message is lost, not the run
            not_read(source, line, exc)


def _record_of(message: Any) -> Any:
    """A message as the builder reads it: a ``ChatMessage`` by its dump, a record as it is."""
    return _dump(message) if _message_fields(message) is not None else message


def _record_type(record: Any) -> str:
    role = record.get("role") if isinstance(record, MAPPINGS) else None
    if isinstance(role, str) and role:
        return str(getattr(role, "value", role))  # a model_dump()'s role is a MessageRole
    return type_of_record(record)


# --- a finished run, read flat (issue 22) -----------------------------------------------------

#: The message classes met, and whether each is LlamaIndex's ``ChatMessage``.
_MESSAGE_CLASSES: dict[type, bool] = {}


def _message_fields(value: Any) -> dict[str, Any] | None:
    """A ``ChatMessage``'s own fields (``role``, ``additional_kwargs``, ``blocks``), read in
    place: no copy, no ``model_dump`` (which costs as much as the rest of the load). None for
    anything else, a dict too."""
    kind = type(value)
    known = _MESSAGE_CLASSES.get(kind)
    if known is None:
        known = _MESSAGE_CLASSES[kind] = kind.__name__ == "ChatMessage" and (
            kind.__module__.startswith("llama_index.")
        )
    return model_fields(value) if known else None


@dataclasses.dataclass
class _FlatRun:
    """What :func:`_flat_run` made of a run's messages, before any of it enters the
    transcript: its entries (each call settled by its result), the calls by id, how many
    messages of each role it read, and the last system prompt."""

    entries: list[Entry]
    calls: dict[str, ToolCall]
    roles: dict[str, int]
    system: str | None


def _read_flat(source: Source, builder: LlamaBuilder, messages: list[Any]) -> bool:
    """A finished run's ``ChatMessage`` objects read flat, in one pass: each call is made
    already settled by its tool message (found by ``tool_call_id``), and every entry is
    appended at once, where the builder appends each message's entries and then updates each
    call; the rules for both are the same functions (:func:`_written`, :func:`_user`,
    :func:`_tool_call`, :func:`_outcome`, :func:`_usage`). Entries, statuses, usage, warnings
    and accounting are those the builder gives message by message (a test holds them equal).

    Only a run of one agent whose messages are all ``ChatMessage`` objects of text, thinking
    and tool-call blocks, each call with an id of its own and at most one result after it, is
    read so. For any other (a handoff, a saved dump, the older ``tool_calls`` form, an image,
    a result before its call or for none) this returns False having changed nothing, and the
    builder reads the whole run."""
    try:
        run = _flat_run(messages, builder.outcomes, builder.open_status) if messages else None
    except MemoryError:
        raise
    except Exception:  # a value of a shape the flat read does not know: the builder's
        run = None
    if run is None:
        return False
    builder.transcript.extend(run.entries)
    builder._calls.update(run.calls)
    builder.recognized += len(messages)
    if run.system is not None:
        builder.transcript.metadata["system"] = run.system
    for role, count in run.roles.items():
        source.accounting.note(role, "mapped", count)
    return True


def _flat_run(
    messages: list[Any], outcomes: Mapping[str, bool], status: ToolStatus
) -> _FlatRun | None:
    """The entries of the messages :func:`_read_flat` reads; None for a run it leaves to the
    builder. A value of another type than the framework's may raise: the caller declines."""
    run = _FlatRun([], {}, {}, None)
    entries, calls = run.entries, run.calls
    counts: dict[Any, int] = {}  # messages read by role (a MessageRole, or its name)
    for line, message in enumerate(messages, start=1):
        fields = _message_fields(message)
        if fields is None:
            return None
        role, kwargs, blocks = fields["role"], fields["additional_kwargs"], fields["blocks"]
        part = _ROLE_PARTS.get(role)
        if part is None or type(kwargs) is not dict or type(blocks) is not list:
            return None
        if part == "assistant":
            if "tool_calls" in kwargs:
                return None  # the older form of calls: the builder's
            made: list[Entry] = []
            for block in blocks:
                own = block.__dict__
                kind = own["block_type"]
                if kind == "tool_call":
                    call = _flat_call(own, calls, status, line)
                    if call is None:
                        return None
                    calls[call.call_id] = call
                    made.append(call)
                elif kind == "text" or kind == "thinking":
                    text = own["text"] if kind == "text" else own["content"]
                    if type(text) is not str and (text is not None or kind == "text"):
                        # Set after the run to what is no text (a thinking block's may be
                        # None): its dump says what it is, or that it cannot be read.
                        return None
                    if kind == "text" and _is_written_form(str(text)):
                        return None  # ReAct's or CodeAct's calls, written as text
                    entry = _written(kind, own)
                    if entry is not None:
                        made.append(entry)
                else:
                    return None  # an image, a citation…: the builder's, from the dump
            if kwargs:
                attach_usage(made, _usage(kwargs))
            entries += made
        else:
            texts = [block.__dict__ for block in blocks]
            if any(text["block_type"] != "text" or type(text["text"]) is not str for text in texts):
                return None  # an image, an attachment…: the builder's, from the dump
            if part == "user" and any(_is_written_form(text["text"]) for text in texts):
                return None  # a CodeAct result: the builder's
            if part == "tool":
                call = calls.get(kwargs.get("tool_call_id", ""))  # no call has an empty id
                if call is None or call.result is not None:
                    return None  # a result for no call, or a second one: the builder warns
                # Not in a transcript yet: its outcome is set, not updated (no observer).
                text, images = _text_of(texts)
                call.status = _outcome(call, text, outcomes.get(call.call_id))
                call.result = text_result(text or None, images=images)
            elif part == "user":
                user = _user(texts)
                if user is not None:
                    entries.append(user)
            else:
                text, _ = _text_of(texts)
                run.system = text or run.system
        counts[role] = counts.get(role, 0) + 1
    run.roles = {str(getattr(role, "value", role)): n for role, n in counts.items()}
    return run


def _flat_call(
    block: dict[str, Any], calls: Mapping[str, ToolCall], status: ToolStatus, line: int
) -> ToolCall | None:
    """A ``ToolCallBlock``'s call (its own fields, ``block``) as the builder makes it, its
    arguments copied; None for one the builder warns of (no id, an id taken) or nests (a
    handoff), and for arguments of no JSON form."""
    call_id, name, args = block["tool_call_id"], block["tool_name"], block["tool_kwargs"]
    if type(call_id) is not str or not call_id or call_id in calls:
        return None
    if type(name) is not str or not name or name == HANDOFF:
        return None
    if type(args) is dict:
        args = _json_copy(args)
    elif type(args) is str:
        args = parse_arguments(args)
    else:
        return None
    return _tool_call(call_id, name, args, status, f"msg-{line}")


def _json_copy(value: Any) -> Any:
    """A copy of a JSON value (a call's arguments), equal to what the message's dump holds;
    a ``ValueError`` for a value of another form (bytes, a tuple, NaN, an object), which the
    dump turns into something else or fails on: then the builder reads the dump."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float and value - value == 0:  # finite: NaN and infinities dump as null
        return value
    if kind is dict and all(type(key) is str for key in value):
        return {key: _json_copy(item) for key, item in value.items()}
    if kind is list:
        return [_json_copy(item) for item in value]
    raise ValueError(f"{kind.__name__} in tool arguments")


# --- objects (spec A-1) -----------------------------------------------------------------------


def _dump(value: Any) -> Any:
    """A LlamaIndex model by its own serialization (``model_dump(mode="json")``)."""
    return value.model_dump(mode="json")


def _output_record(output: Any) -> dict[str, Any]:
    """An ``AgentOutput``, its ``tool_calls`` each dumped as its own type: the field is typed
    ``list[ToolSelection]``, so the output's own dump drops each ``ToolCallResult``'s
    ``tool_output`` and with it ``is_error``."""
    record: dict[str, Any] = _dump(output)
    record["tool_calls"] = plain_each(getattr(output, "tool_calls", None) or [], _dump)
    return record


def _outcome_record(call: Any) -> Any:
    """A ``ToolCallResult`` as the part of its dump :func:`_outcomes` reads beside the run's
    messages (its ``tool_id`` and ``tool_output.is_error``), by attribute: its whole dump
    copies the tool's raw input and output too (issue 22). Anything else by its dump."""
    tool_id = getattr(call, "tool_id", None)
    output = getattr(call, "tool_output", None)
    failed = getattr(output, "is_error", None)
    if type(tool_id) is str and type(failed) is bool:
        # The name and result text pair a ReAct or CodeAct call (no id in the memory) with it.
        content = getattr(output, "content", None)
        return {
            "tool_id": tool_id, "tool_name": getattr(call, "tool_name", None),
            "tool_output": {"is_error": failed, "content": content},
        }  # fmt: skip
    return _dump(call)


def _state_value(context: Any, key: str) -> Any:
    """A value of a workflow context's committed state, read without running the loop."""
    store = getattr(context, "store", None)
    checkpoint = getattr(store, "checkpoint", None)
    if not callable(checkpoint):
        return None
    state = checkpoint().state
    data = getattr(state, "_data", None)
    return data.get(key) if isinstance(data, MAPPINGS) else getattr(state, key, None)


def _memory_messages(memory: Any) -> list[Any]:
    get_all = getattr(memory, "get_all", None)
    if not callable(get_all):
        raise TypeError(f"a {type(memory).__name__} is no LlamaIndex memory")
    return plain_each(get_all(), _plain_message)


def _plain_message(value: Any) -> Any:
    """A ``ChatMessage`` kept as it is, read in place (:func:`_read_messages`, which dumps it
    for the builder where the flat read declines); anything else as :func:`plain` makes it."""
    return value if _message_fields(value) is not None else plain(value)


def _context_run(
    context: Any, output: Any = None, workflow: Any = None, ending: dict[str, str] | None = None
) -> dict[str, Any]:
    memory = _state_value(context, "memory")
    if memory is None:
        raise TypeError("the workflow context holds no memory: await the run first")
    run: dict[str, Any] = dict(ending or {})
    if output is not None:
        run["tool_calls"] = plain_each(getattr(output, "tool_calls", None) or [], _outcome_record)
        structured = getattr(output, "structured_response", None)
        if structured is not None:
            run["structured_response"] = plain_output(structured)
    # The agent that began the run (an AgentWorkflow's root agent) and its system prompt,
    # which the memory does not hold and the live run's first AgentInput shows.
    agents = getattr(workflow, "agents", None)
    root = getattr(workflow, "root_agent", None)
    agent = agents.get(root) if isinstance(agents, MAPPINGS) else workflow
    name, system = getattr(agent, "name", None), getattr(agent, "system_prompt", None)
    if isinstance(name, str) and name:
        run["agent"] = name
    if isinstance(system, str) and system:
        run["system"] = system
    # A run that did not finish (it failed, was stopped, or still runs) never moved its steps
    # from the agent's scratchpad (``FunctionAgent``'s and ``CodeActAgent``'s
    # ``scratchpad_key``) into the memory, which its ``finalize`` does: they follow it there.
    unfinished = plain_each(as_list(_state_value(context, _SCRATCHPAD)), _plain_message)
    return {"messages": [*_memory_messages(memory), *unfinished], RUN_KEY: run}


#: The context's state key of a running agent's steps not yet in the memory (the default
#: ``scratchpad_key`` of ``FunctionAgent`` and ``CodeActAgent``).
_SCRATCHPAD = "scratchpad"


def failure_text(exception: BaseException) -> str:
    """The error a failed run ended with, as the handler raises it and its
    ``WorkflowFailedEvent`` carries it."""
    said = str(exception).strip()
    return f"{type(exception).__name__}: {said}" if said else type(exception).__name__


def stop_ending(event: Any) -> dict[str, str]:
    """How a run ended, where not with its answer, as its stop event says: failed (its
    ``WorkflowFailedEvent`` holds the exception), timed out, or cancelled (stopped)."""
    kind = type(event).__name__
    if kind == "WorkflowFailedEvent":
        failure = getattr(event, "exception", None)
        return {"error": failure_text(failure) if isinstance(failure, BaseException) else kind}
    if kind == "WorkflowTimedOutEvent":
        return {"error": f"The run timed out after {getattr(event, 'timeout', '?')} seconds"}
    if kind == "WorkflowCancelledEvent":
        return {"stopped": "cancelled"}
    return {}


def _handler_ending(handler: Any, stop: Any) -> dict[str, str]:
    """How an awaited handler's run ended (:func:`stop_ending`): by its stop event, kept when
    its events were streamed, else by the exception it raised."""
    ending = stop_ending(stop)
    if ending or stop is not None:
        return ending
    # Without a stream there is no stop event, and the handler's own questions (``done``,
    # ``exception``) are all there is, deprecated by ``workflows`` for awaiting it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        failure = handler.exception() if handler.done() else None
    if failure is None:
        return {}
    if type(failure).__name__ == "WorkflowCancelledByUser":
        return {"stopped": "cancelled"}
    return {"error": failure_text(failure)}


def _end_run(builder: LlamaBuilder, run: Mapping[str, Any]) -> None:
    """The run's end when it did not answer: its error, or the mark that it was stopped."""
    if isinstance(run.get("error"), str):
        builder._append(AssistantError(message=run["error"]))
    elif isinstance(run.get("stopped"), str):
        builder._append(AbortMarker(reason=run["stopped"]))


def plain(value: Any) -> Any:
    """A LlamaIndex run object as the records :func:`read` reads (see the module's doc)."""
    if isinstance(value, (list, tuple)):
        return plain_each(value, _plain_message)
    if _message_fields(value) is not None:
        return [value]
    kind = type(value).__name__
    if kind == "AgentOutput":
        return _output_record(value)
    if kind == "ChatMessage" or hasattr(value, "block_type"):
        return _dump(value)
    if kind == "WorkflowHandler":
        stop = value.get_stop_event() if hasattr(value, "get_stop_event") else None
        result = getattr(stop, "result", None)
        output = result if type(result).__name__ == "AgentOutput" else None
        # The workflow it ran (private, read only for the agent's name and system prompt).
        workflow = getattr(value, "_workflow", None)
        return _context_run(value.ctx, output, workflow, _handler_ending(value, stop))
    if kind == "Context":
        return _context_run(value)
    if hasattr(value, "get_all"):
        return {"messages": _memory_messages(value), RUN_KEY: {}}
    if hasattr(value, "model_dump"):
        return _dump(value)
    if isinstance(value, MAPPINGS):  # a message's model_dump() (its role a MessageRole)
        return plain_value(value)
    return {"(object)": type(value).__qualname__}


# --- live (spec A-2) --------------------------------------------------------------------------

#: Stop events of a run that ended without its answer (:func:`stop_ending`).
_ENDINGS = NameSet({"WorkflowFailedEvent", "WorkflowTimedOutEvent", "WorkflowCancelledEvent"})
#: Events that show nothing: the agent's setup, the workflow's own bookkeeping.
_QUIET = NameSet({"AgentSetup", "ToolCall", "StartEvent", "AgentWorkflowStartEvent",
                  "StepStateChanged", "EventsQueueChanged", "UnhandledEvent"})  # fmt: skip


def _prompt_forms() -> list[re.Pattern[str]]:
    """The system prompts a ``ReActAgent`` and a ``CodeActAgent`` compose around the agent's
    own (their default templates, LlamaIndex's), each with the own one as ``own``."""
    if not _FORMS:
        from llama_index.core.agent.react.prompts import (
            CONTEXT_REACT_CHAT_SYSTEM_HEADER,
            REACT_CHAT_SYSTEM_HEADER,
        )
        from llama_index.core.agent.workflow.codeact_agent import DEFAULT_CODE_ACT_PROMPT

        # With its context first: the other's tool descriptions (any text) could hold it.
        for header in (CONTEXT_REACT_CHAT_SYSTEM_HEADER, REACT_CHAT_SYSTEM_HEADER):
            pattern = ""
            for literal, field, _, _ in string.Formatter().parse(header):
                pattern += re.escape(literal)
                if field is not None:
                    pattern += "(?P<own>.*)" if field == "context" else ".*?"
            _FORMS.append(re.compile(pattern, re.DOTALL))
        # A PromptTemplate: only its one field is filled in, the agent's own prompt after it.
        head, tail = DEFAULT_CODE_ACT_PROMPT.split("{tool_descriptions}", 1)
        code = re.escape(head) + ".*?" + re.escape(tail) + "(?:\n(?P<own>.*))?"
        _FORMS.append(re.compile(code, re.DOTALL))
    return _FORMS


_FORMS: list[re.Pattern[str]] = []


def agent_prompt(text: str) -> str | None:
    """The agent's own system prompt in a live run's system message (what a load reads from
    the agent): a ReAct or CodeAct agent's default prompt holds it (or none)."""
    for form in _prompt_forms():
        found = form.fullmatch(text)
        if found is not None:
            own = found.groupdict().get("own")
            return own.strip() or None if own else None
    return text


class Follower:
    """Maps ``handler.stream_events()`` events into ``transcript`` as they arrive (spec A-2)."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        transcript.metadata.setdefault("source_format", NAME)
        self.builder = LlamaBuilder(transcript, "<stream>", live=True)
        self._fed = 0
        self._started = False
        #: Entries streamed for the response being written, in order.
        self._shown: list[Entry] = []
        self._block: Entry | None = None
        self._parts: list[str] = []
        #: Whether ``_block`` shows the reply's text (``_text``, as written so far), which a
        #: ReAct agent's reasoning makes a Thinking.
        self._in_text = False
        self._text = ""
        #: The reply's whole text as streamed (a ReAct answer's is cut once the run ends).
        self._reply = ""
        self._last_response: Any = None
        self._last_output: Any = None
        #: The run's structured response, shown as its answer at the end (:func:`_structured`).
        self._structured: Any = None

    def feed(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "AgentInput":
            self._input(event)
        elif kind == "AgentStream":
            if event.thinking_delta:
                self._grow_thinking(event.thinking_delta)
            if event.delta:
                self._grow_text(event.delta)
        elif kind == "AgentOutput":
            self._output(event)
        elif kind == "ToolCallResult":
            self._result(event)
        elif kind == "StopEvent":
            result = getattr(event, "result", None)
            if type(result).__name__ == "AgentOutput":
                self._output(result)
        elif kind == "AgentStreamStructuredOutput":
            self._structured = plain_output(getattr(event, "output", None))
        elif kind in _ENDINGS:  # the run failed, timed out or was cancelled
            self._end_block()
            _end_run(self.builder, stop_ending(event))
        elif kind not in _QUIET:
            self.builder.warn_once(f"event {kind} not shown", self._fed or None)

    def close(self) -> None:
        self._end_block()
        self.builder.finish()
        _structured(self.transcript, self._structured)

    def _next(self, message: Any, reuse: list[Entry] | None = None) -> None:
        self._fed += 1
        self.builder.feed_message(message, self._fed, reuse=reuse)

    def _input(self, event: Any) -> None:
        """The first ``AgentInput``: the system prompt and the history up to the prompt; the
        later ones repeat what the run's own events showed."""
        if self._started:
            return
        self._started = True
        agent = getattr(event, "current_agent_name", None)
        if isinstance(agent, str) and agent:
            self.transcript.metadata["agent"] = agent
            self.builder.level.agent = agent
        for message in event.input:
            record = _dump(message)
            if record.get("role") == "system":  # the agent's, not the memory's: no line
                text, _ = _text_of(record.get("blocks"))
                own = agent_prompt(text)
                if own:
                    self.transcript.metadata["system"] = own
            else:
                self._next(record)

    def _grow_thinking(self, piece: str) -> None:
        block = self._block
        if block is None or self._in_text:
            self._parts, self._in_text = [piece], False
            self._block = Thinking(text=piece, streaming=True)
            self._shown.append(self.builder._append(self._block))
            return
        self._parts.append(piece)
        self.builder.update(block, text="".join(self._parts))

    def _grow_text(self, piece: str) -> None:
        """The reply's text grows: a ReAct agent's reasoning (from ``Thought:``) as a Thinking
        its reply's entries write over, a CodeAct agent's without its code (the call shows
        it), shown once it is told which."""
        self._reply += piece
        if not self._in_text:
            self._in_text, self._text, self._block = True, "", None
        self._text += piece
        head = self._text.lstrip()
        if "Thought:".startswith(head):
            return  # not yet told
        kind: type[Thinking] | type[AssistantText] = Thinking
        text = self._text
        if not head.startswith("Thought:"):
            kind, text = AssistantText, _shown_code_text(text)
            if not text.strip():
                return
        if self._block is None:
            entry = Thinking(text=text, streaming=True) if kind is Thinking else kind(text=text)
            self._shown.append(self.builder._append(entry))
            self._block = entry
        else:
            self.builder.update(self._block, text=text)

    def _end_block(self) -> None:
        self._block = None
        self._in_text = False

    def _output(self, output: Any) -> None:
        structured = getattr(output, "structured_response", None)
        if structured is not None:
            self._structured = plain_output(structured)
        if output is self._last_output:
            return  # the StopEvent's: the last reply's, shown already (its text cut since)
        self._last_output = output
        self._end_block()
        shown, self._shown = self._shown, []
        reply, self._reply = self._reply, ""
        if getattr(output, "retry_messages", None):
            self._retried(output, shown)
            return
        response = _dump(output.response)
        if response == self._last_response:
            return  # the StopEvent's AgentOutput is the last response, shown already
        self._last_response = response
        text, _ = _text_of(response.get("blocks"))
        steps = react_steps(reply) if reply and reply != text else None
        if steps and ("Answer", text) in steps:
            # A ReAct answer read after the run cut its text to the answer: as written.
            response = {**response, "blocks": [{"block_type": "text", "text": reply}]}
        self.builder.next_calls = [
            (call.tool_id, call.tool_name, call.tool_kwargs)
            for call in getattr(output, "tool_calls", None) or []
            if type(getattr(call, "tool_id", None)) is str
        ]
        self._next(response, reuse=shown)
        self.builder.next_calls = []

    def _retried(self, output: Any, shown: list[Entry]) -> None:
        """A reply the agent could not parse: it asks the model again (``retry_messages``,
        the reply and what was wrong), and the memory never keeps it. Shown as streamed, or
        its text, and a notice; a load of the run has neither."""
        for entry in shown:
            if isinstance(entry, Thinking) and entry.streaming:
                self.builder.update(entry, streaming=False)
        if not shown:
            text, _ = _text_of(_dump(output.response).get("blocks"))
            if text:
                self.builder._append(_new_text(text))
        said = getattr(output.retry_messages[-1], "content", None)
        why = said.strip().splitlines()[0] if isinstance(said, str) and said.strip() else ""
        key = "reader.asked_again.why" if why else "reader.asked_again"
        self.builder._append(notice(key, {"why": why}, level="warning", subtype="retry"))

    def _result(self, event: Any) -> None:
        output = event.tool_output
        self.builder.outcomes[event.tool_id] = bool(output.is_error)
        blocks = [_dump(block) for block in getattr(output, "blocks", None) or []]
        message = {"role": "tool", "additional_kwargs": {"tool_call_id": event.tool_id},
                   "blocks": blocks}  # fmt: skip
        self._next(message)


RECORDS = Records(
    mapped={
        "user": "a UserMessage (text blocks, images); a CodeActAgent's 'Result of executing "
        "the code given' settles its execute call",
        "assistant": "text, thinking and tool_call blocks in order (one batch), or "
        "additional_kwargs.tool_calls; token counts in additional_kwargs as its usage; a "
        "ReActAgent's reasoning text as its thoughts, calls, observations and answer, a "
        "CodeActAgent's <execute> code as an execute call",
        "tool": "settles the call of its tool_call_id: success / error by the run's "
        "ToolCallResult.is_error where known, else unknown (no flag in the message; the "
        "handoff tool's own text when the agent took over: success); a handoff's "
        "result nests the next agent's steps in the call's SubAgent",
        "system": 'the system prompt: metadata["system"]',
        "agent_output": "an AgentOutput: its calls with their results and is_error, its "
        "response, and a notice that the run's other steps are not in it; its "
        "structured_response: metadata['structured_response'] and the answer (an "
        "AssistantText of it as fenced JSON, meta['structured_output'])",
        RUN_KEY: "a handler's or context's run: the calls' is_error from its AgentOutput; "
        "error / stopped (a run that ended without its answer) → AssistantError / "
        "AbortMarker; its AgentOutput's structured_response as an AgentOutput's",
    },
    ignored={"other key": "other keys of a saved run"},
)
